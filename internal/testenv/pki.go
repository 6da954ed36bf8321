package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeServingCert writes a self-signed serving certificate for 127.0.0.1 and localhost and
// returns its PEM, which clients trust as their CA.
func writeServingCert(dir string) (certPEM []byte, certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kindex-testenv"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, "", "", err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile = filepath.Join(dir, "serving.crt")
	keyFile = filepath.Join(dir, "serving.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, "", "", err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, "", "", err
	}
	return certPEM, certFile, keyFile, nil
}

// writeServiceAccountKey writes the RSA key the apiserver signs service-account tokens with.
func writeServiceAccountKey(dir string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "sa.key")
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	return path, os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeTokenFile writes the static token file: the admin in system:masters, and the restricted
// users, who belong to no group but system:authenticated and hold no grants.
func writeTokenFile(dir string, admin string, users map[string]string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s,%s,\"system:masters\"\n", admin, AdminUser, AdminUser)
	for name, token := range users {
		fmt.Fprintf(&b, "%s,%s,%s\n", token, name, name)
	}
	path := filepath.Join(dir, "tokens.csv")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}
