package tools

import (
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// peerCardKeys loads the key set of every signed peer (nil for the
// others): its own CardKeys and the shared TrustedKeys. Key files are read
// once, at configuration, so that a bad file fails Configure.
func peerCardKeys(cfg Config) ([]*cardsign.KeySet, error) {
	out := make([]*cardsign.KeySet, len(cfg.Agents))
	var shared *cardsign.KeySet
	var errs []error
	if len(cfg.TrustedKeys) > 0 {
		var err error
		if shared, err = cardsign.LoadKeySet(cfg.TrustedKeys...); err != nil {
			errs = append(errs, fmt.Errorf("card_trusted_keys: %w", err))
		}
	}
	for i, p := range cfg.Agents {
		if !p.Signed && len(p.CardKeys) == 0 {
			continue
		}
		own, err := cardsign.LoadKeySet(p.CardKeys...)
		if err != nil {
			errs = append(errs, fmt.Errorf("a2a_agents[%d] (%q): card_keys: %w", i, p.Name, err))
			continue
		}
		ks, err := own.Merge(shared)
		if err != nil {
			errs = append(errs, fmt.Errorf("a2a_agents[%d] (%q): card_keys with card_trusted_keys: %w", i, p.Name, err))
			continue
		}
		out[i] = ks
	}
	return out, errors.Join(errs...)
}
