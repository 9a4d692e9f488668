-- +goose Up
-- saved_views are each person's saved list filters (internal/savedviews): a name and the list's
-- query string, normalised by the list's own parser before it is stored. person is a hash of the
-- person's subject (the subject itself is not kept); name_key is the name folded for the
-- "one name once per list" rule. At most 50 per person (savedviews.MaxPerPerson).
CREATE TABLE saved_views (
    id         TEXT PRIMARY KEY,
    person     TEXT NOT NULL,
    list       TEXT NOT NULL,
    name       TEXT NOT NULL,
    name_key   TEXT NOT NULL,
    query      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- A person's views of a list by name; and the uniqueness of a name in a list.
CREATE UNIQUE INDEX saved_views_person_name ON saved_views (person, list, name_key);

-- +goose Down
DROP TABLE saved_views;
