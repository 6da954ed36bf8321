package httpsafe_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/httpsafe"
)

func ExampleConfig() {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("token leaked:", r.Header.Get("Authorization"))
	}))
	defer elsewhere.Close()
	apiserver := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusFound))
	defer apiserver.Close()

	cfg := httpsafe.Config(&rest.Config{Host: apiserver.URL, BearerToken: "secret"})
	client, _ := rest.HTTPClientFor(cfg)
	resp, err := client.Get(apiserver.URL + "/api")
	if err == nil {
		_ = resp.Body.Close()
	}
	fmt.Println("refused:", errors.Is(err, httpsafe.ErrCrossHostRedirect))
	// Output: refused: true
}
