-- +goose Up
-- The import's mapping step (internal/customerimport, issue 41): an import is first kept with its
-- file's cells as read (cells: the line's cells in JSON, in the file's column order) and its
-- headings (headers), in status 'mapping'; once the person confirms which field each column
-- fills (mapping: the field of each column in JSON, '' for a column not imported), every line is
-- read through the mapping and the per-file value choices (value_map: {"segment": {"folded value":
-- "CODE"}, "country": {...}}) and checked. edits holds the fields a person fixed in the dry run
-- (customerrules.Fields in JSON), kept with the line so that every recheck, and the run, uses them.
ALTER TABLE customer_imports ADD COLUMN headers TEXT NOT NULL DEFAULT '';
ALTER TABLE customer_imports ADD COLUMN mapping TEXT NOT NULL DEFAULT '';
ALTER TABLE customer_imports ADD COLUMN value_map TEXT NOT NULL DEFAULT '';
ALTER TABLE customer_import_lines ADD COLUMN cells TEXT NOT NULL DEFAULT '';
ALTER TABLE customer_import_lines ADD COLUMN edits TEXT NOT NULL DEFAULT '';

-- customer_import_mappings remembers the mapping a person confirmed for a shape of file (shape:
-- a hash of the file's set of headings, folded), so the next file of that shape is proposed the
-- same mapping (mapping: [{"header": "...", "field": "..."}] in JSON). A person keeps a bounded
-- number (customerimport.maxMappings); the oldest goes first.
CREATE TABLE customer_import_mappings (
    owner      TEXT NOT NULL,
    shape      TEXT NOT NULL,
    mapping    TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (owner, shape)
);

-- customer_import_runs names each run of an import (a job of internal/jobs) by its file, for the
-- list of a person's imports; deleted with the runs' retention (customerimport.Store.Purge).
CREATE TABLE customer_import_runs (
    job_id     TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    file_name  TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX customer_import_runs_created ON customer_import_runs (created_at);

-- +goose Down
DROP TABLE customer_import_runs;
DROP TABLE customer_import_mappings;
ALTER TABLE customer_import_lines DROP COLUMN edits;
ALTER TABLE customer_import_lines DROP COLUMN cells;
ALTER TABLE customer_imports DROP COLUMN value_map;
ALTER TABLE customer_imports DROP COLUMN mapping;
ALTER TABLE customer_imports DROP COLUMN headers;
