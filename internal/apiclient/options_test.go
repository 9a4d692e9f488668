package apiclient

import "fmt"

// Test-only options: the portal itself keeps the defaults.

// WithMaxResponseBytes bounds the size of a JSON answer (default
// [DefaultMaxResponseBytes]).
func WithMaxResponseBytes(n int64) Option {
	return func(c *Client) error {
		if n < 1 {
			return fmt.Errorf("WithMaxResponseBytes: %d is not positive", n)
		}
		c.maxResponseBytes = n
		return nil
	}
}
