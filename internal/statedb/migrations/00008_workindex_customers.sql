-- +goose Up
-- Customers by name, for the lists' search: a search by part of a name reads this small table
-- (one row per customer) and then the rows of the customers it found through
-- work_rows_customer, instead of every row of a kind (docs/work-index.md "Storage and speed").
-- It is a filter only: nothing shows a name from it.
CREATE TABLE work_customers (
    customer_id INTEGER PRIMARY KEY,
    folded      TEXT NOT NULL
);
INSERT INTO work_customers (customer_id, folded)
    SELECT customer_id, MAX(customer_folded) FROM work_rows WHERE customer_id <> 0 AND customer_folded <> '' GROUP BY customer_id;

-- +goose Down
DROP TABLE work_customers;
