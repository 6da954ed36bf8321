package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Everything the seed writes is a pure function of the object's index, so that seeding can
// resume after an interruption and two runs measure byte-identical objects.

// nameAlphabet is the alphabet Kubernetes uses for generated name suffixes.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// apps are the Deployments the seeded pods pretend to belong to.
var apps = []string{
	"checkout", "payments", "cart", "catalog", "search", "recommendations", "shipping",
	"inventory", "accounts", "auth", "notifications", "pricing", "reviews", "frontend",
	"gateway", "orders", "billing", "ledger", "fraud-detection", "media", "analytics-ingest",
	"session", "coupon", "loyalty",
}

var teams = []string{"storefront", "platform", "money", "growth", "data"}

// baseTime is when the seeded world began.
var baseTime = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

// suffix returns a 5-character generated-name suffix, distinct for every i below 27^5.
func suffix(i int) string {
	const n = 27 * 27 * 27 * 27 * 27
	// 7919 is prime and not 3, so multiplying by it permutes 0..27^5-1 and the suffixes
	// look random while staying distinct.
	x := (i*7919 + 12345) % n
	b := make([]byte, 5)
	for k := range b {
		b[k] = nameAlphabet[x%27]
		x /= 27
	}
	return string(b)
}

// templateHash returns a pod-template-hash-like string for app a.
func templateHash(a int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("template/%d", a)))
	b := make([]byte, 10)
	for k := range b {
		b[k] = nameAlphabet[int(h[k])%27]
	}
	return string(b)
}

// hexOf returns n hex digits that depend only on parts.
func hexOf(n int, parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	s := hex.EncodeToString(h[:])
	for len(s) < n {
		h = sha256.Sum256([]byte(s))
		s += hex.EncodeToString(h[:])
	}
	return s[:n]
}

// uuidOf returns a UUID-shaped string that depends only on parts.
func uuidOf(parts ...any) string {
	s := hexOf(32, parts...)
	return s[0:8] + "-" + s[8:12] + "-4" + s[13:16] + "-a" + s[17:20] + "-" + s[20:32]
}

// PodName is the name of the i-th seeded pod.
func PodName(i int) string {
	a := i % len(apps)
	return apps[a] + "-" + templateHash(a) + "-" + suffix(i)
}

// DatabaseName is the name of the i-th seeded custom resource.
func DatabaseName(i int) string {
	return fmt.Sprintf("%s-db-%s", apps[i%len(apps)], suffix(i))
}
