// Package pagecache drops a file's pages from the kernel's page cache, so
// that the next open of the file reads the disk: what cold start-up figures
// ('neardup index bench --cold', the frozen index's benchmarks) are measured
// after.
package pagecache
