package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/config"
)

// TestDemoSignersAnswerByThemselves: the demo's simulator makes signers answer a request
// PORTAL_DEMO_SIGNER_DELAY after it was sent, every third declining with a reason, so `make run`
// shows signed and declined contracts.
func TestDemoSignersAnswerByThemselves(t *testing.T) {
	t.Parallel()
	d, err := startSimulator(config.Config{DemoCustomers: 5, DemoSimAdmin: true, DemoSignerDelay: time.Second}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	numbers, err := d.sim.SeedContracts(3)
	if err != nil {
		t.Fatal(err)
	}
	base := d.url.String()
	for i := range numbers {
		// Seeded contracts are numbered after the one the simulator seeds itself (id 1).
		body := fmt.Sprintf(`{"contractId": %d, "email": "demo@example.com", "signerName": "Demo Signer"}`, i+2)
		req, _ := http.NewRequest(http.MethodPost, base+"/v2/signature", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer demo")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("send contract %s for signature: %d", numbers[i], resp.StatusCode)
		}
	}
	type request struct {
		SignatureRequestID int64
		Status             string
		DeclineReason      string
	}
	// Wait for the signers (the delay is 1 s; bounded).
	var answered map[string]int
	var declined []request
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/_sim/signatures")
		if err != nil {
			t.Fatal(err)
		}
		var reqs []request
		err = json.NewDecoder(resp.Body).Decode(&reqs)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		answered, declined = map[string]int{}, nil
		for _, r := range reqs {
			answered[r.Status]++
			if r.Status == "DECLINED" {
				declined = append(declined, r)
			}
		}
		if answered["SENT"] == 0 {
			break
		}
	}
	// Four requests (the seeded contract's and three sent here): ids 1 to 4, the third declined.
	if answered["SIGNED"] != 3 || len(declined) != 1 || declined[0].SignatureRequestID != 3 || declined[0].DeclineReason == "" {
		t.Fatalf("demo signers answered %v, declined %+v", answered, declined)
	}
}
