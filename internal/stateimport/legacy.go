package stateimport

import "time"

// The JSON documents the portal kept in its key-value store before the state database
// (internal/store, up to a57ba4e). They are read here only; nothing writes them any more.

// legacyWorkShard is a shard of the work index ("workindex/shard/NN").
type legacyWorkShard struct {
	Rows []legacyWorkRow `json:"rows"`
}

type legacyWorkRow struct {
	Kind           string    `json:"k"`
	QuoteID        int64     `json:"q,omitempty"`
	CPQID          int32     `json:"p,omitempty"`
	CustomerID     int32     `json:"cu,omitempty"`
	Customer       string    `json:"cn,omitempty"`
	Configurator   string    `json:"cf,omitempty"`
	ContractID     int32     `json:"c,omitempty"`
	ContractNumber string    `json:"n,omitempty"`
	Stage          string    `json:"s"`
	OneOffCents    int64     `json:"o"`
	MonthlyCents   int64     `json:"m"`
	CreatedBy      string    `json:"cb,omitempty"`
	CreatedByName  string    `json:"cbn,omitempty"`
	ChangedBy      string    `json:"chb,omitempty"`
	ChangedByName  string    `json:"chbn,omitempty"`
	Owners         []string  `json:"ow,omitempty"`
	Denied         []string  `json:"dn,omitempty"`
	ChangedAt      time.Time `json:"ca"`
	SeenAt         time.Time `json:"sa"`
}

func (r legacyWorkRow) id() int64 {
	if r.Kind == "contract" {
		return int64(r.ContractID)
	}
	return r.QuoteID
}

// legacyPeopleShard is a shard of the people directory ("people/shard/NN").
type legacyPeopleShard struct {
	People []legacyPerson `json:"people"`
}

type legacyPerson struct {
	Login  string    `json:"l,omitempty"`
	Name   string    `json:"n"`
	Email  string    `json:"e,omitempty"`
	SeenAt time.Time `json:"s"`
}

// legacyRecentList is one user's recent items ("recent/<hash of the subject>").
type legacyRecentList struct {
	Items []legacyRecentItem `json:"items"`
}

type legacyRecentItem struct {
	Kind       string `json:"kind"`
	ID         int64  `json:"id"`
	Number     string `json:"number,omitempty"`
	QuoteID    int64  `json:"quoteId"`
	CPQID      int32  `json:"cpqId"`
	CustomerID int32  `json:"customerId"`
	Customer   string `json:"customer,omitempty"`
	Total      string `json:"total,omitempty"`
	Totals     *struct {
		OneOffCents  int64 `json:"oneOff"`
		MonthlyCents int64 `json:"monthly"`
	} `json:"totals,omitempty"`
	Status string    `json:"status,omitempty"`
	At     time.Time `json:"at"`
}
