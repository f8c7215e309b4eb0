package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Colours: ours stand out, the references are greys and blues.
var serverColor = map[string]color.Color{
	srvFloor:      color.RGBA{150, 150, 150, 255},
	srvOursMem:    color.RGBA{255, 170, 90, 255},
	srvOursSQLite: color.RGBA{220, 90, 20, 255},
	srvGoSDK:      color.RGBA{70, 130, 200, 255},
	srvJSSDK:      color.RGBA{120, 170, 90, 255},
	srvPyHost:     color.RGBA{160, 60, 160, 255},
}

// bar is one server's bar: the median and the range across rounds.
type bar struct {
	name          string
	med, min, max float64
}

// barPanel draws one bar per server with its range as an error bar and
// the median printed above it.
func barPanel(title, ylabel string, bars []bar) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Y.Tick.Marker = plainTicks{}
	names := make([]string, len(bars))
	var pts plotter.XYs
	var errs plotter.YErrors
	var labels []string
	top := 0.0
	for i, b := range bars {
		names[i] = b.name
		bc, err := plotter.NewBarChart(plotter.Values{b.med}, vg.Points(36))
		if err != nil {
			return nil, err
		}
		bc.XMin = float64(i)
		bc.LineStyle.Width = 0
		if c, ok := serverColor[b.name]; ok {
			bc.Color = c
		}
		p.Add(bc)
		pts = append(pts, plotter.XY{X: float64(i), Y: b.med})
		errs = append(errs, struct{ Low, High float64 }{b.med - b.min, b.max - b.med})
		labels = append(labels, short(b.med))
		top = max(top, b.max)
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	p.Add(eb)
	// Labels sit above the range bar, not on it.
	lp := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		lp[i] = plotter.XY{X: pt.X, Y: bars[i].max + top*0.03}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lp, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(lb)
	p.Y.Max = top * 1.15
	p.NominalX(names...)
	return p, nil
}

// plainTicks are plot's default ticks labelled without trailing zeros
// ("50000", not "50000.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// short formats a value for a label.
func short(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// linePanel draws one line per series over nominal x positions.
func linePanel(title, ylabel string, xs []string, series map[string][]float64, order []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	top := 0.0
	for i, name := range order {
		ys := series[name]
		if len(ys) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(ys))
		for j, y := range ys {
			pts[j] = plotter.XY{X: float64(j), Y: y}
			top = max(top, y)
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c, ok := serverColor[name]
		if !ok {
			c = []color.Color{color.RGBA{220, 90, 20, 255}, color.RGBA{70, 130, 200, 255}, color.RGBA{120, 170, 90, 255}}[i%3]
		}
		l.Color, s.Color = c, c
		l.Width = vg.Points(2)
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	p.Y.Max = top * 1.15
	p.NominalX(xs...)
	return p, nil
}

// savePanels writes plots side by side into one PNG.
func savePanels(path string, panels ...*plot.Plot) error {
	const h = 4.5
	w := vg.Length(len(panels)) * 5.5 * vg.Inch
	img := vgimg.New(w, h*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeCharts draws the comparison (one PNG per mode: req/s and p99 per
// server) and the growth curves, and returns the files written.
func writeCharts(dir string, res *Results) ([]string, error) {
	var files []string
	for _, mode := range res.Config.Modes {
		rows := filter(res.Summary, func(r summaryRow) bool { return r.Mode == mode })
		if len(rows) == 0 {
			continue
		}
		var rps, p99 []bar
		for _, r := range rows {
			rps = append(rps, bar{r.Server, r.RPS.Median, r.RPS.Min, r.RPS.Max})
			p99 = append(p99, bar{r.Server, r.P99.Median, r.P99.Min, r.P99.Max})
		}
		suffix := fmt.Sprintf("%s, %d clients, median of %d rounds", mode, res.Config.Clients, res.Config.Rounds)
		a, err := barPanel("throughput (req/s) — "+suffix, "req/s", rps)
		if err != nil {
			return files, err
		}
		b, err := barPanel("p99 latency (ms) — "+suffix, "ms", p99)
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, "bench-"+mode+".png")
		if err := savePanels(path, a, b); err != nil {
			return files, err
		}
		files = append(files, path)
	}

	if len(res.GrowthClients) > 0 {
		var xs []string
		seen := map[int]bool{}
		rps, rss := map[string][]float64{}, map[string][]float64{}
		var order []string
		for _, g := range res.GrowthClients {
			if !seen[g.Clients] {
				seen[g.Clients] = true
				xs = append(xs, strconv.Itoa(g.Clients))
			}
			if _, ok := rps[g.Server]; !ok {
				order = append(order, g.Server)
			}
			rps[g.Server] = append(rps[g.Server], g.Load.RPS)
			rss[g.Server] = append(rss[g.Server], float64(g.Mem.RSS)/1024)
		}
		a, err := linePanel("send req/s by concurrent clients", "req/s", xs, rps, order)
		if err != nil {
			return files, err
		}
		b, err := linePanel("RSS after the run (MiB) by concurrent clients", "MiB", xs, rss, order)
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, "growth-clients.png")
		if err := savePanels(path, a, b); err != nil {
			return files, err
		}
		files = append(files, path)
	}

	if len(res.GrowthTasks) > 0 {
		var xs []string
		send := map[string][]float64{}
		list := map[string][]float64{}
		rss := map[string][]float64{}
		for _, g := range res.GrowthTasks {
			xs = append(xs, strconv.FormatInt(g.Stored, 10))
			send[srvOursSQLite] = append(send[srvOursSQLite], g.Send.RPS)
			list["p50"] = append(list["p50"], g.List.Latency.P50)
			list["p99"] = append(list["p99"], g.List.Latency.P99)
			rss["after fill"] = append(rss["after fill"], float64(g.MemBefore.RSS)/1024)
			rss["after send run"] = append(rss["after send run"], float64(g.Mem.RSS)/1024)
		}
		a, err := linePanel("send req/s by stored tasks (sqlite)", "req/s", xs, send, []string{srvOursSQLite})
		if err != nil {
			return files, err
		}
		b, err := linePanel("ListTasks first page (ms) by stored tasks", "ms", xs, list, []string{"p50", "p99"})
		if err != nil {
			return files, err
		}
		c, err := linePanel("plugin memory (MiB) by stored tasks", "MiB", xs, rss, []string{"after fill", "after send run"})
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, "growth-tasks.png")
		if err := savePanels(path, a, b, c); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}
