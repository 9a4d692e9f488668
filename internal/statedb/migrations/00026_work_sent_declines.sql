-- +goose Up
-- Issue 41's team figures: the median days from sending a contract for signature to its
-- signature, and the declines with their reasons, per rep (docs/home.md "Team figures by rep").
--
-- work_rows.sent_at: when the contract was sent for signature, as the v2 document dates the
-- request that decides its stage (the signed request's sentAt, else the latest request's), else
-- the moment the portal first saw it out for signature (0: never seen sent). Contracts out for
-- signature before this migration take the day they entered the stage; signed ones are not known.
-- work_rows.decline_reason: the signer's reason of a declined contract (whitespace collapsed, at
-- most 200 characters; '' when none is given or the contract is not declined).
ALTER TABLE work_rows ADD COLUMN sent_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE work_rows ADD COLUMN decline_reason TEXT NOT NULL DEFAULT '';
UPDATE work_rows SET sent_at = stage_since WHERE kind = 'contract' AND stage = 'signature';

-- work_viewer_rep_signed: for each viewer, the signed contracts revealed to them (signed_at > 0,
-- archived since or not) by the rep who created or changed them last (a contract counts for both
-- when they differ) and by whole days from sent_at to signed_at (-1: the send is not known; at
-- most 366), with their value: the table's wins in one read and the median days to signature
-- from a histogram. work_viewer_rep_declines: the contracts in stage declined revealed to each
-- viewer, by rep and reason. Both kept by every write in its transaction as work_viewer_reps is
-- (internal/workindex/totals.go).
CREATE TABLE work_viewer_rep_signed (
    person      TEXT    NOT NULL,
    rep         TEXT    NOT NULL,
    days        INTEGER NOT NULL,
    n           BIGINT  NOT NULL DEFAULT 0,
    value_cents BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (person, rep, days)
);
CREATE TABLE work_viewer_rep_declines (
    person TEXT   NOT NULL,
    rep    TEXT   NOT NULL,
    reason TEXT   NOT NULL,
    n      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (person, rep, reason)
);
INSERT INTO work_viewer_rep_signed (person, rep, days, n, value_cents)
    SELECT o.person, r.created_by, -1, COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.signed_at > 0 AND r.created_by <> '' AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.created_by;
INSERT INTO work_viewer_rep_signed (person, rep, days, n, value_cents)
    SELECT o.person, r.changed_by, -1, COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.signed_at > 0 AND r.changed_by <> '' AND r.changed_by <> r.created_by AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.changed_by
    ON CONFLICT (person, rep, days) DO UPDATE SET n = work_viewer_rep_signed.n + excluded.n,
    value_cents = work_viewer_rep_signed.value_cents + excluded.value_cents;
INSERT INTO work_viewer_rep_declines (person, rep, reason, n)
    SELECT o.person, r.created_by, '', COUNT(*)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.stage = 'declined' AND r.created_by <> '' AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.created_by;
INSERT INTO work_viewer_rep_declines (person, rep, reason, n)
    SELECT o.person, r.changed_by, '', COUNT(*)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.kind = 'contract' AND r.stage = 'declined' AND r.changed_by <> '' AND r.changed_by <> r.created_by AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, r.changed_by
    ON CONFLICT (person, rep, reason) DO UPDATE SET n = work_viewer_rep_declines.n + excluded.n;

-- +goose Down
DROP TABLE work_viewer_rep_declines;
DROP TABLE work_viewer_rep_signed;
ALTER TABLE work_rows DROP COLUMN decline_reason;
ALTER TABLE work_rows DROP COLUMN sent_at;
