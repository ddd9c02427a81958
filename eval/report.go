package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TruthSummary is the ground truth's reference figures, the columns of the
// corpora README.
type TruthSummary struct {
	J95        int     `json:"j95"`
	J90        int     `json:"j90"`
	J80        int     `json:"j80"`
	J70        int     `json:"j70"`
	J50        int     `json:"j50"`
	Threshold  int     `json:"at_threshold"` // pairs at the evaluation threshold
	DocsIn80   int     `json:"docs_in_j80_pair"`
	DocsIn     int     `json:"docs_at_threshold"`
	ExactPairs int     `json:"exact_duplicate_pairs"`
	Candidates int     `json:"lsh_candidates"`
	Bands      int     `json:"lsh_bands"`
	Rows       int     `json:"lsh_rows"`
	MissAt70   float64 `json:"miss_probability_j70"`
	MissAt50   float64 `json:"miss_probability_j50"`
	Seconds    float64 `json:"seconds"`
}

// Summarize returns the truth's figures, with the evaluation threshold th.
func (t *Truth) Summarize(th float64) TruthSummary {
	return TruthSummary{
		J95: t.Count(0.95), J90: t.Count(0.9), J80: t.Count(0.8), J70: t.Count(0.7), J50: t.Count(0.5),
		Threshold: t.Count(th), DocsIn80: t.DocsIn(0.8), DocsIn: t.DocsIn(th),
		ExactPairs: t.ExactPairs, Candidates: t.Candidates,
		Bands: t.Options.Bands, Rows: t.Options.Rows,
		MissAt70: t.MissProbability(0.7), MissAt50: t.MissProbability(0.5),
	}
}

// Report is the evaluation of one corpus.
type Report struct {
	Corpus    string       `json:"corpus"`
	Docs      int          `json:"docs"`
	Distinct  int          `json:"distinct_texts"`
	Threshold float64      `json:"threshold"`
	Truth     TruthSummary `json:"truth"`
	Options   Options      `json:"options"` // as Evaluate used them (defaults filled in)
	Results   []Result     `json:"results"`
	// Dedup scores runs of the dedup pipeline itself (EvaluateDedup).
	Dedup []DedupResult `json:"dedup,omitempty"`
}

// WriteJSON writes reports as one indented JSON array.
func WriteJSON(w io.Writer, reports []*Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(reports)
}

// WriteTable writes the report as aligned text: the truth's figures, then
// one row per setting and k.
func (r *Report) WriteTable(w io.Writer) error {
	t := r.Truth
	fmt.Fprintf(w, "%s: %d docs, %d distinct texts, %d exact-duplicate pairs\n", r.Corpus, r.Docs, r.Distinct, t.ExactPairs)
	fmt.Fprintf(w, "truth pairs J>=0.95 %d, J>=0.9 %d, J>=0.8 %d, J>=0.7 %d, J>=0.5 %d (lower bound); docs in a J>=0.8 pair %d\n",
		t.J95, t.J90, t.J80, t.J70, t.J50, t.DocsIn80)
	fmt.Fprintf(w, "LSH %d×%d, %d candidates, miss probability %.1e at J=0.7, %.2f at J=0.5; %.1fs\n",
		t.Bands, t.Rows, t.Candidates, t.MissAt70, t.MissAt50, t.Seconds)
	fmt.Fprintf(w, "scores against J>=%g (%d pairs, %d docs)\n", r.Threshold, t.Threshold, t.DocsIn)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setting\tk\tpair P\tpair R\tpair F1\tdoc P\tdoc R\tdoc F1\tcandidates\tpredicted\tseconds\t")
	for _, x := range r.Results {
		k := fmt.Sprint(x.K)
		if x.K < 0 {
			k = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%.2f\t\n", x.Name, k,
			x.Pair.Precision, x.Pair.Recall, x.Pair.F1, x.Doc.Precision, x.Doc.Recall, x.Doc.F1, x.Candidates, x.Predicted, x.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Dedup) == 0 {
		return nil
	}
	fmt.Fprintf(w, "the dedup pipeline ('neardup dedup'), against the keep-first rule on the truth at J>=%g:\n", r.Threshold)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setting\tremoved\tkept\tcoverage\tresidual\tdoc P\tdoc R\tdoc F1\tseconds\t")
	for _, x := range r.Dedup {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t%.2f\t\n", x.Name, x.Removed, x.Kept,
			x.Coverage, x.Residual, x.Doc.Precision, x.Doc.Recall, x.Doc.F1, x.Seconds)
	}
	return tw.Flush()
}

// Best returns, for each setting, the result with the highest document-level
// F1 (ties: the smaller k), in the order the settings first appear.
func (r *Report) Best() []Result {
	var order []string
	best := map[string]Result{}
	for _, x := range r.Results {
		b, ok := best[x.Name]
		if !ok {
			order = append(order, x.Name)
		}
		if !ok || x.Doc.F1 > b.Doc.F1 {
			best[x.Name] = x
		}
	}
	out := make([]Result, len(order))
	for i, n := range order {
		out[i] = best[n]
	}
	return out
}

// palette holds distinguishable colours (Tableau 10 plus two), one per setting.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 0, 255}, {255, 215, 0, 255},
}

// PlotFormats are the formats WritePlot accepts.
var PlotFormats = []string{"svg", "png"}

// WritePlot draws precision (solid) and recall (dashed) against k for every
// SimHash setting, one row per report, pair level on the left and document
// level on the right, MinHash settings as dotted horizontal lines, in format
// "svg" or "png".
func WritePlot(w io.Writer, reports []*Report, format string) error {
	if len(reports) == 0 {
		return ErrNoDocs
	}
	plots := make([][]*plot.Plot, len(reports))
	for i, r := range reports {
		for _, level := range []string{"pair", "document", "legend"} {
			p, err := panel(r, level)
			if err != nil {
				return err
			}
			plots[i] = append(plots[i], p)
		}
	}
	width, height := 39*vg.Centimeter, vg.Length(len(reports))*11*vg.Centimeter
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))}
	default:
		return fmt.Errorf("%w: plot format %q (want svg or png)", ErrSetting, format)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(reports), Cols: 3, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	_, err := c.WriteTo(w)
	return err
}

// panel is one chart: precision and recall against k at one level, or
// (level "legend") only the legend, drawn beside the charts so that it hides
// no line.
func panel(r *Report, level string) (*plot.Plot, error) {
	p := plot.New()
	legendOnly := level == "legend"
	if legendOnly {
		p.HideAxes()
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		p.Title.Text = "solid: precision, dashed: recall"
	} else {
		p.Title.Text = fmt.Sprintf("%s: %s level vs J>=%g", r.Corpus, level, r.Threshold)
		p.X.Label.Text = "Hamming distance k"
		p.Y.Label.Text = "precision (solid), recall (dashed)"
		p.Y.Min, p.Y.Max = 0, 1.02
		p.Add(plotter.NewGrid())
	}
	score := func(x Result) Scores {
		if level == "pair" {
			return x.Pair
		}
		return x.Doc
	}
	var names []string
	series := map[string][2]plotter.XYs{}
	minhashes := map[string]Scores{}
	for _, x := range r.Results {
		if _, ok := series[x.Name]; !ok {
			if _, ok := minhashes[x.Name]; !ok {
				names = append(names, x.Name)
			}
		}
		s := score(x)
		if x.K < 0 {
			minhashes[x.Name] = s
			continue
		}
		v := series[x.Name]
		v[0] = append(v[0], plotter.XY{X: float64(x.K), Y: s.Precision})
		v[1] = append(v[1], plotter.XY{X: float64(x.K), Y: s.Recall})
		series[x.Name] = v
	}
	minK, maxK := 0.0, 12.0
	for _, v := range series {
		if len(v[0]) > 0 {
			minK, maxK = v[0][0].X, v[0][len(v[0])-1].X
		}
	}
	for i, name := range names {
		col := palette[i%len(palette)]
		var pts [2]plotter.XYs
		if v, ok := series[name]; ok {
			pts = v
		} else if s, ok := minhashes[name]; ok {
			pts[0] = plotter.XYs{{X: minK, Y: s.Precision}, {X: maxK, Y: s.Precision}}
			pts[1] = plotter.XYs{{X: minK, Y: s.Recall}, {X: maxK, Y: s.Recall}}
		}
		for m, xy := range pts {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.LineStyle.Color = col
			l.LineStyle.Width = vg.Points(1.5)
			switch {
			case m == 1 && strings.HasPrefix(name, MethodMinHash):
				l.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
			case m == 1:
				l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			case strings.HasPrefix(name, MethodMinHash):
				l.LineStyle.Dashes = []vg.Length{vg.Points(8), vg.Points(2), vg.Points(1), vg.Points(2)}
			}
			if legendOnly {
				if m == 0 {
					p.Legend.Add(name, l)
				}
				continue
			}
			p.Add(l)
		}
	}
	return p, nil
}

var htmlPage = template.Must(template.New("eval").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>neardup eval</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 90%; }
th, td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.best { font-weight: bold; background: #eef6ee; }
figure { margin: 0; }
</style></head><body>
<h1>neardup eval</h1>
<p>Ground truth: exact Jaccard of 5-token shingles (the corpora README's definition), candidates from MinHash-LSH.
Precision (solid) and recall (dashed) against the Hamming distance k; MinHash-LSH settings, which have no k, are flat lines.</p>
<figure>{{.Plot}}</figure>
{{range .Reports}}
<h2>{{.Corpus}}</h2>
<p>{{.Docs}} documents, {{.Distinct}} distinct texts, {{.Truth.ExactPairs}} exact-duplicate pairs (left out).
Pairs J&ge;0.95: {{.Truth.J95}}, J&ge;0.9: {{.Truth.J90}}, J&ge;0.8: {{.Truth.J80}}, J&ge;0.5: {{.Truth.J50}} (lower bound);
documents in a J&ge;0.8 pair: {{.Truth.DocsIn80}}. Scores against J&ge;{{.Threshold}}.</p>
<h3>Best k per setting (document-level F1)</h3>
<table><tr><th>setting</th><th>k</th><th>pair P</th><th>pair R</th><th>pair F1</th><th>doc P</th><th>doc R</th><th>doc F1</th><th>seconds</th></tr>
{{range .Best}}<tr><td>{{.Name}}</td><td>{{if lt .K 0}}-{{else}}{{.K}}{{end}}</td><td>{{printf "%.3f" .Pair.Precision}}</td><td>{{printf "%.3f" .Pair.Recall}}</td><td>{{printf "%.3f" .Pair.F1}}</td><td>{{printf "%.3f" .Doc.Precision}}</td><td>{{printf "%.3f" .Doc.Recall}}</td><td>{{printf "%.3f" .Doc.F1}}</td><td>{{printf "%.2f" .Seconds}}</td></tr>
{{end}}</table>
<details><summary>All results</summary>
<table><tr><th>setting</th><th>k</th><th>pair P</th><th>pair R</th><th>pair F1</th><th>doc P</th><th>doc R</th><th>doc F1</th><th>candidates</th><th>predicted</th><th>seconds</th></tr>
{{range .Results}}<tr><td>{{.Name}}</td><td>{{if lt .K 0}}-{{else}}{{.K}}{{end}}</td><td>{{printf "%.3f" .Pair.Precision}}</td><td>{{printf "%.3f" .Pair.Recall}}</td><td>{{printf "%.3f" .Pair.F1}}</td><td>{{printf "%.3f" .Doc.Precision}}</td><td>{{printf "%.3f" .Doc.Recall}}</td><td>{{printf "%.3f" .Doc.F1}}</td><td>{{.Candidates}}</td><td>{{.Predicted}}</td><td>{{printf "%.2f" .Seconds}}</td></tr>
{{end}}</table></details>
{{end}}
</body></html>
`))

// WriteHTML writes a self-contained page with the plot (as inline SVG) and
// the tables of every report.
func WriteHTML(w io.Writer, reports []*Report) error {
	var svg bytes.Buffer
	if err := WritePlot(&svg, reports, "svg"); err != nil {
		return err
	}
	s := svg.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:] // drop the XML prologue, not allowed inside HTML
	}
	return htmlPage.Execute(w, struct {
		Plot    template.HTML
		Reports []*Report
	}{template.HTML(s), reports})
}
