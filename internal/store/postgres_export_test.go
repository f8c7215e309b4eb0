package store

// FoldTaskCounts lets the external tests fold a PostgreSQL store's task
// count deltas when they choose.
var FoldTaskCounts = (*Postgres).foldTaskCounts

// BenchTask and Populate give the external PostgreSQL benchmarks the
// task and the stored-task mix of the internal ones (bench_test.go).
var (
	BenchTask = benchTask
	Populate  = populate
)
