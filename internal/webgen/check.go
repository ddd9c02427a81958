package webgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/dedup"
)

// CheckOptions configure Check.
type CheckOptions struct {
	Threshold float64 // the dedup's Jaccard threshold; 0: 0.8
	Examples  int     // unplanted and false removals to list; 0: 20, negative: none
}

// Report is what Check found. Planted near-copies and controls are sorted by
// their planted Jaccard against the threshold, whatever their kind.
type Report struct {
	Threshold float64 `json:"threshold"`
	Docs      int     `json:"docs"`
	Removed   int     `json:"removed"`

	Near        int     `json:"near"`         // planted near-copies with Jaccard >= threshold
	NearRemoved int     `json:"near_removed"` // of which removed
	Recall      float64 `json:"recall"`       // NearRemoved / Near (1 when Near is 0)

	Exact        int `json:"exact"`
	ExactRemoved int `json:"exact_removed"`

	// NearOfRemoved counts planted near-copies (Jaccard >= threshold) that
	// were kept while their original was removed, and whose Jaccard to the
	// document kept in the original's place is below the threshold:
	// keep-first compares a document with kept ones only, so such a copy may
	// rightly stay (pages of one site whose template outweighs their
	// bodies remove originals). Recall leaves them out.
	NearOfRemoved int `json:"near_of_removed,omitempty"`

	Controls        int `json:"controls"`         // planted near-copies with Jaccard < threshold
	ControlsRemoved int `json:"controls_removed"` // wrongly removed: below the threshold to the kept document, or unverified
	// ControlsAbove counts controls removed for another document than their
	// original, at a recomputed Jaccard >= threshold: rightly.
	ControlsAbove int `json:"controls_above,omitempty"`

	// Unplanted counts removed documents that are not planted copies (such
	// as a second copy of one original, close to the first, two short
	// bodies of the same sentence, or two pages of one site whose template
	// outweighs their bodies); UnplantedAbove those whose recomputed
	// Jaccard to their kept document reaches the threshold, which are
	// legitimate.
	Unplanted      int `json:"unplanted"`
	UnplantedAbove int `json:"unplanted_above"`
	// FalseRemovals counts removed documents whose exact Jaccard to their
	// kept document, recomputed from the texts, is below the threshold.
	FalseRemovals int `json:"false_removals"`
	// Unverified counts removals whose kept document is not in the corpus
	// (a stored document, in incremental mode).
	Unverified int `json:"unverified"`

	// Examples lists false removals, then unplanted removals and controls
	// removed for another document, each in duplicates-file order.
	Examples []Removal `json:"examples,omitempty"`
}

// Removal describes one removed document.
type Removal struct {
	ID       string   `json:"id"`
	KeptID   string   `json:"kept_id"`
	Reported *float64 `json:"reported_jaccard,omitempty"` // the dedup's
	Jaccard  float64  `json:"jaccard"`                    // recomputed
	Planted  *Planted `json:"planted,omitempty"`
}

// Check reads a generated corpus (JSON lines with id, text and planted, as
// Write makes them) and a dedup duplicates file (dedup.Duplicate lines) and
// compares the removals with the planted truth. It holds the texts of the
// removed documents and of those kept in their place, about twice the
// removed documents' bytes, and of the near-copies kept whose original was
// removed.
func Check(ctx context.Context, corpus, duplicates io.Reader, opt CheckOptions) (Report, error) {
	if opt.Threshold == 0 {
		opt.Threshold = 0.8
	}
	if opt.Examples == 0 {
		opt.Examples = 20
	}
	rep := Report{Threshold: opt.Threshold}
	var dups []dedup.Duplicate
	need := map[string]string{}    // id -> text, once read
	removed := map[string]string{} // id -> kept id, "" when kept in the index
	dec := json.NewDecoder(bufio.NewReaderSize(duplicates, 1<<20))
	for {
		var d dedup.Duplicate
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return rep, fmt.Errorf("%w: line %d: %v", ErrDuplicates, len(dups)+1, err)
		}
		dups = append(dups, d)
		need[d.DupID] = ""
		removed[d.DupID] = ""
		if !d.Index {
			need[d.KeptID] = ""
			removed[d.DupID] = d.KeptID
		}
	}
	planted := map[string]Planted{}
	var orphans [][2]string // near-copy kept, document kept for its removed original
	br := bufio.NewReaderSize(corpus, 1<<20)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			var d struct {
				ID      string          `json:"id"`
				Text    json.RawMessage `json:"text"`
				Planted *Planted        `json:"planted"`
			}
			if err := json.Unmarshal(b, &d); err != nil {
				return rep, fmt.Errorf("%w: line %d: %v", ErrCorpus, line, err)
			}
			rep.Docs++
			if d.Planted != nil {
				planted[d.ID] = *d.Planted
				switch {
				case d.Planted.Kind == KindExact:
					rep.Exact++
				case d.Planted.Jaccard >= opt.Threshold:
					rep.Near++
					if _, ok := removed[d.ID]; !ok {
						if k := removed[d.Planted.Of]; k != "" {
							need[d.ID] = ""
							orphans = append(orphans, [2]string{d.ID, k})
						}
					}
				default:
					rep.Controls++
				}
			}
			if _, ok := need[d.ID]; ok {
				var text string
				if err := json.Unmarshal(d.Text, &text); err != nil {
					return rep, fmt.Errorf("%w: line %d: text: %v", ErrCorpus, line, err)
				}
				need[d.ID] = text
			}
			if line%(1<<16) == 0 {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return rep, err
		}
	}
	var bad, other []Removal // examples
	for _, d := range dups {
		p, isPlanted := planted[d.DupID]
		r, below, candidate := rep.countRemoval(d, p, isPlanted, func() float64 {
			return TextJaccard(need[d.DupID], need[d.KeptID])
		})
		switch {
		case below && len(bad) < opt.Examples:
			bad = append(bad, r)
		case candidate && len(other) < opt.Examples:
			other = append(other, r)
		}
	}
	for _, o := range orphans {
		if TextJaccard(need[o[0]], need[o[1]]) < opt.Threshold {
			rep.NearOfRemoved++
		}
	}
	rep.finish(bad, other, opt.Examples)
	return rep, nil
}

// finish sets r's examples (the false removals first, then the others, at
// most n in all) and its recall of the planted near-copies.
func (r *Report) finish(bad, other []Removal, n int) {
	if n > 0 {
		r.Examples = append(bad, other[:min(len(other), n-len(bad))]...)
	}
	r.Recall = 1
	if m := r.Near - r.NearOfRemoved; m > 0 {
		r.Recall = float64(r.NearRemoved) / float64(m)
	}
}

// countRemoval counts removal d in r, given its planted truth (p, when
// isPlanted) and j, the recomputed Jaccard of its text and its kept
// document's (called unless the kept document is an index's). It returns
// the removal as an example, whether it is a false removal (below the
// threshold) and whether it may be an example of the second kind
// (unplanted, or a control).
func (r *Report) countRemoval(d dedup.Duplicate, p Planted, isPlanted bool, j func() float64) (ex Removal, below, candidate bool) {
	r.Removed++
	control := isPlanted && p.Kind != KindExact && p.Jaccard < r.Threshold
	switch {
	case !isPlanted:
		r.Unplanted++
	case p.Kind == KindExact:
		r.ExactRemoved++
	case !control:
		r.NearRemoved++
	}
	if d.Index {
		r.Unverified++
		if control {
			r.ControlsRemoved++
		}
		return ex, false, false
	}
	jj := j()
	below = jj < r.Threshold
	switch {
	case !isPlanted && !below:
		r.UnplantedAbove++
	case control && below:
		r.ControlsRemoved++
	case control:
		r.ControlsAbove++
	}
	if below {
		r.FalseRemovals++
	}
	ex = Removal{ID: d.DupID, KeptID: d.KeptID, Reported: d.Jaccard, Jaccard: jj}
	if isPlanted {
		ex.Planted = &p
	}
	return ex, below, !isPlanted || control
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	_, err := fmt.Fprintf(w, `documents          %d, %d removed (threshold %.2f)
near-copies        %d planted at J >= %.2f, %d removed: recall %.4f
exact copies       %d planted, %d removed (%.2f%%)
controls           %d planted at J < %.2f, %d wrongly removed
unplanted removals %d (%d at J >= %.2f)
false removals     %d (recomputed J < %.2f)
`, r.Docs, r.Removed, r.Threshold,
		r.Near, r.Threshold, r.NearRemoved, r.Recall,
		r.Exact, r.ExactRemoved, pct(r.ExactRemoved, r.Exact),
		r.Controls, r.Threshold, r.ControlsRemoved,
		r.Unplanted, r.UnplantedAbove, r.Threshold,
		r.FalseRemovals, r.Threshold)
	if err != nil {
		return err
	}
	// Lines that only corpora with sites or short bodies need.
	if r.NearOfRemoved > 0 {
		if _, err := fmt.Fprintf(w, "near-copies kept   %d whose original was removed, at J < %.2f to the document kept for it (not in recall)\n", r.NearOfRemoved, r.Threshold); err != nil {
			return err
		}
	}
	if r.ControlsAbove > 0 {
		if _, err := fmt.Fprintf(w, "controls removed   %d for another document, at J >= %.2f (rightly)\n", r.ControlsAbove, r.Threshold); err != nil {
			return err
		}
	}
	if r.Unverified > 0 {
		if _, err := fmt.Fprintf(w, "unverified         %d (kept document not in the corpus)\n", r.Unverified); err != nil {
			return err
		}
	}
	for _, e := range r.Examples {
		rep := "-"
		if e.Reported != nil {
			rep = fmt.Sprintf("%.4f", *e.Reported)
		}
		kind := "unplanted"
		if e.Planted != nil {
			kind = fmt.Sprintf("%s of %s J %.4f", e.Planted.Kind, e.Planted.Of, e.Planted.Jaccard)
		}
		if _, err := fmt.Fprintf(w, "  %s removed for %s: reported J %s, recomputed %.4f (%s)\n", e.ID, e.KeptID, rep, e.Jaccard, kind); err != nil {
			return err
		}
	}
	return nil
}
