-- +goose Up
-- Issue 41's rep picker: one rep's signed value by month (docs/home.md "Signed by month").
--
-- work_viewer_rep_months: for each viewer, the signed contracts revealed to them (signed_at > 0,
-- archived since or not) by the rep who created or changed them last (a contract counts for both
-- when they differ: the rows of the list's "by" filter) and by the UTC month of their signature
-- (work_rows.signed_month, yyyymm), with their value: a rep's twelve months in one read of a few
-- rows, as work_viewer_signed gives the team's. Kept by every write in its transaction as
-- work_viewer_rep_signed is (internal/workindex/totals.go); filled here from the rows and reads
-- as they stand (the same rule: a read at or after the row's facts, not refused).
CREATE TABLE work_viewer_rep_months (
    person      TEXT    NOT NULL,
    rep         TEXT    NOT NULL,
    month       INTEGER NOT NULL,
    n           BIGINT  NOT NULL DEFAULT 0,
    value_cents BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (person, rep, month)
);
INSERT INTO work_viewer_rep_months (person, rep, month, n, value_cents)
    SELECT o.person, r.created_by, r.signed_month, COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.signed_at > 0 AND r.created_by <> '' AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.created_by, r.signed_month;
INSERT INTO work_viewer_rep_months (person, rep, month, n, value_cents)
    SELECT o.person, r.changed_by, r.signed_month, COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.signed_at > 0 AND r.changed_by <> '' AND r.changed_by <> r.created_by AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.changed_by, r.signed_month
    ON CONFLICT (person, rep, month) DO UPDATE SET n = work_viewer_rep_months.n + excluded.n,
    value_cents = work_viewer_rep_months.value_cents + excluded.value_cents;

-- +goose Down
DROP TABLE work_viewer_rep_months;
