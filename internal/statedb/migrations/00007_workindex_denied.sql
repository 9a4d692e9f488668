-- +goose Up
-- The rows the v2 API refused a viewer move to a table of their own: they are few, so every
-- list leaves them out with an anti-join on a small table instead of a probe into work_viewers
-- per row it reads (docs/work-index.md "Storage and speed"). work_viewers keeps only successful
-- reads.
CREATE TABLE work_denied (
    person TEXT   NOT NULL,
    kind   TEXT   NOT NULL,
    id     BIGINT NOT NULL,
    PRIMARY KEY (person, kind, id)
);
INSERT INTO work_denied (person, kind, id) SELECT person, kind, id FROM work_viewers WHERE denied = 1;
DELETE FROM work_viewers WHERE denied = 1;
ALTER TABLE work_viewers DROP COLUMN denied;

-- +goose Down
ALTER TABLE work_viewers ADD COLUMN denied INTEGER NOT NULL DEFAULT 0;
INSERT INTO work_viewers (person, kind, id, owner, denied, seen_at) SELECT person, kind, id, 0, 1, 0 FROM work_denied;
DROP TABLE work_denied;
