package storetest

import (
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// Open returns a new, empty store each time it is called; the suites
// close it at the end of each subtest.
type Open func(t *testing.T) store.Store

// test is one case of a suite.
type test struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// Run runs the suite of every role (each a subtest named by its role) and
// the cases that cross roles.
func Run(t *testing.T, open Open) {
	for _, suite := range []struct {
		role string
		run  func(*testing.T, Open)
	}{
		{"Tasks", RunTasks},
		{"PushConfigs", RunPushConfigs},
		{"Outbox", RunOutbox},
		{"Conversations", RunConversations},
		{"Delegations", RunDelegations},
		{"Maintenance", RunMaintenance},
		{"AcrossRoles", RunAcrossRoles},
	} {
		t.Run(suite.role, func(t *testing.T) { suite.run(t, open) })
	}
}

// RunTasks is the suite of the store.Tasks role: save, get, list (filters,
// order, pages, totals), the active tasks, and the owner and agent scoping
// (store.AgentView, AdoptTasks).
func RunTasks(t *testing.T, open Open) {
	run(t, open, []test{
		{"SaveGetReplace", testSaveGetReplace},
		{"CopiesInAndOut", testCopies},
		{"GetUnknownIsNotFound", testGetUnknown},
		{"SaveRejectsBadRecords", testSaveRejects},
		{"OwnerScoping", testOwnerScoping},
		{"AgentScoping", testAgentScoping},
		{"ListFiltersAndPages", testListFilters},
		{"ListOrderNewestFirstTiesByID", testListOrder},
		{"ListStatusAfterIsInclusive", testStatusAfter},
		{"ListTotalSizeFollowsChanges", testTotalSizeFollowsChanges},
		{"ListPagesStableUnderInserts", testPagesUnderInserts},
		{"ListPageSizeBounds", testPageSizeBounds},
		{"ListInvalidPageToken", testInvalidPageToken},
		{"ListEmpty", testListEmpty},
		{"ActiveTasks", testActiveTasks},
	})
}

// RunPushConfigs is the suite of the store.PushConfigs role.
func RunPushConfigs(t *testing.T, open Open) {
	run(t, open, []test{
		{"PushConfigCRUD", testPushConfigCRUD},
	})
}

// RunOutbox is the suite of the store.Outbox role: order per config,
// retries and give-ups, claims, and deliveries saved with their task in
// one transaction.
func RunOutbox(t *testing.T, open Open) {
	run(t, open, []test{
		{"OutboxOrderPerConfig", testOutboxOrder},
		{"OutboxRetryAndGiveUp", testOutboxRetry},
		{"OutboxDeletedConfigDropsDeliveries", testOutboxDeleteConfig},
		{"OutboxKeepsContextAndTrace", testOutboxTrace},
		{"OutboxClaimTakesDueHeads", testOutboxClaim},
		{"SaveTaskWithDeliveriesIsAtomic", testSaveAtomic},
	})
}

// RunConversations is the suite of the store.Conversations role (one
// agent's conversations are in RunTasks' AgentScoping, with the rest of
// the agent view).
func RunConversations(t *testing.T, open Open) {
	run(t, open, []test{
		{"Conversations", testConversations},
	})
}

// RunDelegations is the suite of the store.Delegations role.
func RunDelegations(t *testing.T, open Open) {
	run(t, open, []test{
		{"DelegationsRecordAndEnd", testDelegationsRecordAndEnd},
		{"DelegationsClaimAndUpdate", testDelegationsClaimAndUpdate},
	})
}

// RunMaintenance is the suite of the store.Maintenance role: pruning
// (tasks, deliveries, conversations, delegations). AdoptTasks is tested
// with the agent view, in RunTasks' AgentScoping.
func RunMaintenance(t *testing.T, open Open) {
	run(t, open, []test{
		{"Prune", testPrune},
		{"DelegationsPrune", testDelegationsPrune},
	})
}

// RunAcrossRoles is the cases that exercise several roles at once: a
// canceled context refused by each, and concurrent use.
func RunAcrossRoles(t *testing.T, open Open) {
	run(t, open, []test{
		{"CanceledContext", testCanceled},
		{"Concurrency", testConcurrency},
	})
}

// run runs each case on a new store from open and closes it afterwards.
func run(t *testing.T, open Open, tests []test) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}
