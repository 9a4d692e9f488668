-- +goose Up
-- The home page's figures and a team's lists read the viewer's own reads (docs/work-index.md
-- "Visibility rule", docs/performance.md "Visibility by construction costs the home page and team
-- lists"): a row is revealed to a viewer only when their read (work_viewers.seen_at) is at or
-- after its facts (work_rows.facts_at), so their counts and sums cannot come from everyone's
-- work_totals, and adding up or probing their rows one by one grows with what they read.
--
-- Beside each read, the row's stage, last change and stage_since as that read left them: for a
-- read that is revealed (seen_at >= facts_at) they are the row's own (every write that moves them
-- moves facts_at, and every read writes them again), so a viewer's reads in one stage, in either
-- order, are an index range of their own. The predicate on work_rows still decides what is shown;
-- these only say where to read.
ALTER TABLE work_viewers ADD COLUMN stage TEXT NOT NULL DEFAULT '';
ALTER TABLE work_viewers ADD COLUMN changed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE work_viewers ADD COLUMN stage_since BIGINT NOT NULL DEFAULT 0;
UPDATE work_viewers SET (stage, changed_at, stage_since) = (SELECT r.stage, r.changed_at, r.stage_since FROM work_rows r
    WHERE r.kind = work_viewers.kind AND r.id = work_viewers.id)
    WHERE EXISTS (SELECT 1 FROM work_rows r WHERE r.kind = work_viewers.kind AND r.id = work_viewers.id);
CREATE INDEX work_viewers_stage_since   ON work_viewers (person, kind, stage, stage_since, id);
CREATE INDEX work_viewers_stage_changed ON work_viewers (person, kind, stage, changed_at, id);

-- work_viewer_totals: for each viewer, the count and value (value_cents) by kind and stage of the
-- rows revealed to them, apart by whether they own the row (owner: it is in their lists) and
-- whether it is theirs (mine: they created it or changed it last, their My quotes), so
-- workindex.Sums reads a few rows for any scope. work_viewer_reps: the same by the person who
-- created the row or changed it last (a row counts for both when they differ), for a team role's
-- figures by rep (workindex.SumsByPerson). Kept by every write in its transaction (a row's facts
-- changing takes it out of every viewer's totals it was revealed to; a viewer's read puts it in
-- theirs; a refusal takes it out), internal/workindex/totals.go.
CREATE TABLE work_viewer_totals (
    person      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    stage       TEXT    NOT NULL,
    owner       INTEGER NOT NULL,
    mine        INTEGER NOT NULL,
    n           BIGINT  NOT NULL DEFAULT 0,
    value_cents BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (person, kind, stage, owner, mine)
);
CREATE TABLE work_viewer_reps (
    person      TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    stage       TEXT   NOT NULL,
    rep         TEXT   NOT NULL,
    name        TEXT   NOT NULL DEFAULT '',
    n           BIGINT NOT NULL DEFAULT 0,
    value_cents BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (person, kind, stage, rep)
);
INSERT INTO work_viewer_totals (person, kind, stage, owner, mine, n, value_cents)
    SELECT o.person, o.kind, r.stage, o.owner, CASE WHEN r.created_by = o.person OR r.changed_by = o.person THEN 1 ELSE 0 END,
    COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.seen_at >= r.facts_at AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, o.kind, r.stage, o.owner, CASE WHEN r.created_by = o.person OR r.changed_by = o.person THEN 1 ELSE 0 END;
INSERT INTO work_viewer_reps (person, kind, stage, rep, name, n, value_cents)
    SELECT o.person, o.kind, r.stage, r.created_by, MAX(r.created_by_name), COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.seen_at >= r.facts_at AND r.created_by <> ''
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, o.kind, r.stage, r.created_by;
INSERT INTO work_viewer_reps (person, kind, stage, rep, name, n, value_cents)
    SELECT o.person, o.kind, r.stage, r.changed_by, MAX(r.changed_by_name), COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE o.seen_at >= r.facts_at AND r.changed_by <> '' AND r.changed_by <> r.created_by
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, o.kind, r.stage, r.changed_by
    ON CONFLICT (person, kind, stage, rep) DO UPDATE SET n = work_viewer_reps.n + excluded.n,
    value_cents = work_viewer_reps.value_cents + excluded.value_cents,
    name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE work_viewer_reps.name END;

-- +goose Down
DROP TABLE work_viewer_reps;
DROP TABLE work_viewer_totals;
DROP INDEX work_viewers_stage_changed;
DROP INDEX work_viewers_stage_since;
ALTER TABLE work_viewers DROP COLUMN stage_since;
ALTER TABLE work_viewers DROP COLUMN changed_at;
ALTER TABLE work_viewers DROP COLUMN stage;
