"""A small line chart with 95% error bars, as hand-written SVG (only the standard library),
shared by the reports under scripts/ (the equal-time ladder, the ablations)."""
import math

COLOURS = ["#c0392b", "#2471a3", "#229954", "#af7ac5", "#d68910", "#566573", "#17a589", "#17202a", "#e84393"]


def line_chart(title, x_label, y_label, series, log_x=False, x_ticks=None, y_step=100):
    """series: [{"name", "colour" (optional), "points": [{"x", "y", "lo", "hi", "tip"}]}];
    `lo`/`hi` (an interval around y) and `tip` (hover text) may be None."""
    w, h, left, right, top, bottom = 680, 400, 70, 190, 30, 50
    pts = [p for s in series for p in s["points"] if p["y"] is not None]
    if not pts:
        raise ValueError("nothing to plot")
    ys = [p["y"] for p in pts] + [p["lo"] for p in pts if p.get("lo") is not None] + \
         [p["hi"] for p in pts if p.get("hi") is not None] + [0]
    lo = math.floor(min(ys) / y_step) * y_step
    hi = math.ceil(max(ys) / y_step) * y_step
    if hi == lo:
        hi = lo + y_step
    fx = (lambda x: math.log10(x)) if log_x else (lambda x: x)
    xs = [fx(p["x"]) for p in pts]
    pad = 0.15 if log_x else 0.05 * ((max(xs) - min(xs)) or 1)
    x0, x1 = min(xs) - pad, max(xs) + pad

    def X(x):
        return left + (fx(x) - x0) / (x1 - x0) * (w - left - right)

    def Y(y):
        return top + (hi - y) / (hi - lo) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">{title}</text>']
    for y in range(int(lo), int(hi) + 1, y_step):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{Y(y):.1f}" y2="{Y(y):.1f}" stroke="{"#888" if y == 0 else "#eee"}"/>')
        out.append(f'<text x="{left - 8}" y="{Y(y) + 4:.1f}" text-anchor="end">{y}</text>')
    if x_ticks is None:
        # Round steps over the data's own range (which need not start at 0).
        lo_x, hi_x = min(p["x"] for p in pts), max(p["x"] for p in pts)
        span = (hi_x - lo_x) or abs(hi_x) or 1
        step = 10 ** math.floor(math.log10(span))
        first = math.ceil(lo_x / step)
        x_ticks = [round(k * step, 10) for k in range(first, first + int(span / step) + 2)]
    # Only ticks inside the plotted range.
    x_ticks = [x for x in x_ticks if (not log_x or x > 0) and x0 <= fx(x) <= x1]
    for x in x_ticks:
        out.append(f'<text x="{X(x):.1f}" y="{h - bottom + 18}" text-anchor="middle">{x:g}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">{x_label}</text>')
    out.append(f'<text transform="translate(18,{(top + h - bottom) / 2}) rotate(-90)" text-anchor="middle">{y_label}</text>')
    for k, s in enumerate(series):
        c = s.get("colour") or COLOURS[k % len(COLOURS)]
        mine = sorted((p for p in s["points"] if p["y"] is not None), key=lambda p: p["x"])
        if len(mine) > 1:
            path = " ".join(f'{"M" if i == 0 else "L"}{X(p["x"]):.1f},{Y(p["y"]):.1f}' for i, p in enumerate(mine))
            out.append(f'<path d="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        for p in mine:
            x = X(p["x"]) + (k - (len(series) - 1) / 2) * 6
            if p.get("lo") is not None and p.get("hi") is not None:
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{Y(max(p["lo"], lo)):.1f}" y2="{Y(min(p["hi"], hi)):.1f}" stroke="{c}"/>')
            tip = f'<title>{p["tip"]}</title>' if p.get("tip") else ""
            out.append(f'<circle cx="{x:.1f}" cy="{Y(p["y"]):.1f}" r="4" fill="{c}">{tip}</circle>')
        out.append(f'<rect x="{w - right + 15}" y="{top + 20 * k}" width="12" height="12" fill="{c}"/>')
        out.append(f'<text x="{w - right + 32}" y="{top + 20 * k + 11}">{s["name"]}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
