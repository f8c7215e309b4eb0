package store

// FoldTaskCounts lets the external tests fold a PostgreSQL store's task
// count deltas when they choose.
var FoldTaskCounts = (*Postgres).foldTaskCounts
