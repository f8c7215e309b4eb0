package config

import (
	"strings"
	"testing"
)

func TestMaxPushConfigsPerTask(t *testing.T) {
	c, err := Load(nil, env(nil))
	if err != nil || c.MaxPushConfigsPerTask != 10 {
		t.Fatalf("default %d, %v", c.MaxPushConfigsPerTask, err)
	}
	c, err = Load([]byte(`{"max_push_configs_per_task": 4}`), env(map[string]string{"A2A_MAX_PUSH_CONFIGS_PER_TASK": "3"}))
	if err != nil || c.MaxPushConfigsPerTask != 3 {
		t.Fatalf("from the environment %d, %v", c.MaxPushConfigsPerTask, err)
	}
	if _, err := Load([]byte(`{"max_push_configs_per_task": 0}`), env(nil)); err == nil || !strings.Contains(err.Error(), "max_push_configs_per_task (A2A_MAX_PUSH_CONFIGS_PER_TASK) must be positive") {
		t.Fatalf("0: %v", err)
	}
}
