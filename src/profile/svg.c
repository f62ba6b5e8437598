/* SPDX-License-Identifier: MIT */
/*
 * svg.c - an interactive flame graph: one self-contained SVG (inline
 * script and style, nothing fetched), in the manner of Brendan Gregg's
 * flamegraph.pl: a frame's width is its weight, stacks grow up from "all"
 * (or down, --inverted, an icicle graph); hover shows name, weight and
 * percent; a click zooms into a frame; search (button, Ctrl-F, or "?s=RE"
 * in the URL) highlights matches and prints the matched share of the
 * total, counting nested matches once; reset undoes both.
 *
 * Colours tell kinds of code apart: kernel orange, native red, .NET
 * managed blue, Go aqua, Go runtime grey-teal, interpreted green, a
 * language runtime's native code (libcoreclr, libjvm) mauve, synthetic
 * grey, unknown yellow; the shade within a kind comes from the name, so a
 * function has the same colour wherever it appears.
 *
 * Large profiles stay usable: frames narrower than min_width pixels are not
 * drawn one by one; a run of narrow siblings is drawn as one grey box
 * ("N narrow frames") when the run is wide enough, and left out otherwise.
 * The drawing is the function-level view, so its weights are folded's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/buf.h"
#include "common/map.h"
#include "profile/profile_impl.h"

#define FRAME_H 16
#define FONT_PX 12
#define CHAR_PX 7.0 /* average glyph width of 12px Verdana */
#define XPAD 10
#define TOP_PAD 62
#define BOTTOM_PAD 30

struct svg {
	const rtd_profile *p;
	const struct ftree *t;
	FILE *f;
	rtd_buf b;
	int err;
	double width, min_width, scale; /* scale: pixels per unit of weight */
	bool inverted;
	unsigned maxdepth;
	int height;
	const char *unit;
	size_t type;
	int64_t total;
	unsigned kinds; /* bit per frame kind drawn */
};

static void sv_put(struct svg *s, int err)
{
	if (err && !s->err)
		s->err = err;
}

static void sv_flush(struct svg *s, bool force)
{
	if (s->err || (!force && s->b.len < (256u << 10)))
		return;
	if (s->b.len && fwrite(s->b.data, 1, s->b.len, s->f) != s->b.len)
		s->err = rtd_write_errno();
	rtd_buf_reset(&s->b);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2
			      : c >= 0xe0 && c < 0xf0   ? 3
			      : c >= 0xf0 && c < 0xf5   ? 4
							: 0;
	if (!k || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (k == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, or a UTF-16 surrogate */
	if (k == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return k;
}

/* Append text escaped for XML, at most max_chars code points (then ".."),
 * invalid UTF-8 and control characters replaced. */
static void sv_text(struct svg *s, const char *str, size_t max_chars)
{
	const unsigned char *u = (const unsigned char *)str;
	size_t n = strlen(str), chars = 0;
	for (size_t i = 0; i < n && !s->err;) {
		if (chars == max_chars) {
			sv_put(s, rtd_buf_puts(&s->b, ".."));
			return;
		}
		size_t k = utf8_len(u + i, n - i);
		chars++;
		if (!k) {
			sv_put(s, rtd_buf_puts(&s->b, "\xef\xbf\xbd"));
			i++;
			continue;
		}
		if (k > 1) {
			sv_put(s, rtd_buf_append(&s->b, u + i, k));
			i += k;
			continue;
		}
		char c = (char)u[i++];
		switch (c) {
		case '&': sv_put(s, rtd_buf_puts(&s->b, "&amp;")); break;
		case '<': sv_put(s, rtd_buf_puts(&s->b, "&lt;")); break;
		case '>': sv_put(s, rtd_buf_puts(&s->b, "&gt;")); break;
		case '"': sv_put(s, rtd_buf_puts(&s->b, "&quot;")); break;
		default:
			sv_put(s, rtd_buf_putc(&s->b, (unsigned char)c < 0x20 ||
							      c == 0x7f
							  ? ' '
							  : c));
		}
	}
}

static size_t utf8_chars(const char *str)
{
	size_t n = 0;
	for (const unsigned char *u = (const unsigned char *)str; *u; u++)
		n += (*u & 0xc0) != 0x80;
	return n;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Base colour and spread per kind: r, g, b, and how far each may move. */
static const uint8_t palette[RTD_FRAME_KIND_COUNT][6] = {
	[RTD_FRAME_UNKNOWN] = {205, 150, 0, 50, 80, 55},
	[RTD_FRAME_NATIVE] = {200, 50, 50, 55, 60, 60},
	[RTD_FRAME_KERNEL] = {230, 130, 20, 25, 50, 40},
	[RTD_FRAME_MANAGED] = {110, 110, 220, 50, 50, 35},
	[RTD_FRAME_GO] = {40, 180, 200, 50, 50, 50},
	[RTD_FRAME_GO_RUNTIME] = {120, 170, 180, 40, 30, 20},
	[RTD_FRAME_INTERPRETED] = {50, 190, 50, 60, 50, 60},
	[RTD_FRAME_OTHER] = {180, 180, 180, 30, 30, 30},
	[RTD_FRAME_RUNTIME] = {160, 110, 170, 40, 40, 40},
};

static void sv_color(struct svg *s, unsigned kind, const char *name)
{
	const uint8_t *c = palette[kind < RTD_FRAME_KIND_COUNT ? kind : 0];
	uint32_t h = name_hash(name);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0;
	/* one shade along the whole spread keeps the hue recognisable */
	int r = c[0] + (int)(c[3] * v1), g = c[1] + (int)(c[4] * v1),
	    b = c[2] + (int)(c[5] * v2);
	sv_put(s, rtd_buf_printf(&s->b, "rgb(%d,%d,%d)", r, g, b));
}

static double depth_y(const struct svg *s, unsigned depth)
{
	if (s->inverted)
		return TOP_PAD + (double)depth * FRAME_H;
	return s->height - BOTTOM_PAD - (double)(depth + 1) * FRAME_H;
}

static void sv_frame(struct svg *s, const char *name, unsigned kind,
		     int64_t start, int64_t w, unsigned depth, bool merged)
{
	double x = XPAD + (double)start * s->scale;
	double wd = (double)w * s->scale;
	double y = depth_y(s, depth);
	char v[32];
	sv_put(s, rtd_buf_printf(&s->b,
				 "<g class=\"f\" data-s=\"%" PRId64 "\" data-w=\"%" PRId64
				 "\" data-d=\"%u\"><title>",
				 start, w, depth));
	sv_text(s, name, SIZE_MAX);
	sv_put(s, rtd_buf_printf(&s->b, "\n%s, %.2f%%</title><rect x=\"%.1f\" "
					"y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
					"fill=\"",
				 prof_fmt_value(w, s->unit, v, sizeof(v)),
				 s->total ? 100.0 * (double)w / (double)s->total
					  : 0.0,
				 x, y, wd, FRAME_H - 1));
	if (merged)
		sv_put(s, rtd_buf_puts(&s->b, "rgb(200,200,200)"));
	else
		sv_color(s, kind, name);
	sv_put(s, rtd_buf_printf(&s->b, "\" rx=\"2\" ry=\"2\"/><text x=\"%.1f\" "
					"y=\"%.1f\">",
				 x + 3, y + FRAME_H - 4.5));
	double fit = floor((wd - 6) / CHAR_PX);
	if (fit >= 3) {
		size_t max = (size_t)fit;
		sv_text(s, name, utf8_chars(name) > max ? max - 2 : SIZE_MAX);
	}
	sv_put(s, rtd_buf_puts(&s->b, "</text></g>\n"));
	if (!merged)
		s->kinds |= 1u << (kind < RTD_FRAME_KIND_COUNT ? kind : 0);
	sv_flush(s, false);
}

/* Depth-first over the drawn frames: calls draw (or measures depth when
 * draw is false). Narrow siblings are merged into runs. */
static int sv_walk(struct svg *s, bool draw)
{
	const struct ftree *t = s->t;
	struct item {
		uint32_t node;
		unsigned depth;
		int64_t start;
	} *stack = malloc((t->nn + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	size_t sp = 0;
	stack[sp++] = (struct item){0, 0, 0};
	while (sp && !s->err) {
		struct item it = stack[--sp];
		const struct ftree_node *n = &t->n[it.node];
		if (it.depth > s->maxdepth)
			s->maxdepth = it.depth;
		if (draw) {
			sv_frame(s, it.node ? ftree_name(s->p, t, n->name) : "all",
				 it.node ? n->kind : RTD_FRAME_OTHER, it.start,
				 n->total, it.depth, false);
			/* the legend names the kinds of the samples' frames,
			 * not the "all" box's */
			if (!it.node)
				s->kinds = 0;
		}
		/* children left to right; pushed right to left */
		size_t base = sp;
		/* children from the parent's left edge; its self weight is
		 * the gap left on the right */
		int64_t off = it.start, run_start = 0, run_w = 0;
		unsigned run_n = 0;
		for (uint32_t c = n->first_child; c != PROF_NONE;
		     c = t->n[c].next_sibling) {
			int64_t w = t->n[c].total;
			if (w <= 0)
				continue;
			if ((double)w * s->scale < s->min_width) {
				if (!run_n)
					run_start = off;
				run_w += w;
				run_n++;
			} else {
				if (run_n && draw &&
				    (double)run_w * s->scale >= s->min_width) {
					char label[64];
					snprintf(label, sizeof(label),
						 "%u narrow frames", run_n);
					sv_frame(s, label, RTD_FRAME_OTHER,
						 run_start, run_w, it.depth + 1,
						 true);
				}
				run_n = 0;
				run_w = 0;
				stack[sp++] = (struct item){c, it.depth + 1, off};
			}
			off += w;
		}
		if (run_n && draw && (double)run_w * s->scale >= s->min_width) {
			char label[64];
			snprintf(label, sizeof(label), "%u narrow frames", run_n);
			sv_frame(s, label, RTD_FRAME_OTHER, run_start, run_w,
				 it.depth + 1, true);
		}
		for (size_t i = base, j = sp; i + 1 < j; i++, j--) {
			struct item x = stack[i];
			stack[i] = stack[j - 1];
			stack[j - 1] = x;
		}
	}
	free(stack);
	return s->err;
}

/* The viewer: zoom, search, details. Plain ES5, no network. */
static const char script[] =
	"var svg=document.documentElement,W=+svg.getAttribute('data-width'),\n"
	"XP=10,TOTAL=+svg.getAttribute('data-total'),frames=[],root=null,\n"
	"details,matched,zoomed=null,term=null;\n"
	"function fname(g){var t=g.firstChild.textContent;return t.substring(0,t.lastIndexOf('\\n'));}\n"
	"function finfo(g){return g.firstChild.textContent.replace('\\n',' (')+')';}\n"
	"function fit(g,w){var n=fname(g),m=Math.floor((w-6)/7);var tx=g.lastChild;\n"
	" if(m<3)tx.textContent='';else if(n.length>m)tx.textContent=n.substring(0,m-2)+'..';else tx.textContent=n;}\n"
	"function init(){details=document.getElementById('details');matched=document.getElementById('matched');\n"
	" frames=[].slice.call(document.querySelectorAll('g.f'));root=frames[0];\n"
	" frames.forEach(function(g){g.addEventListener('mouseover',function(){details.textContent=finfo(g);});\n"
	"  g.addEventListener('mouseout',function(){details.textContent=' ';});\n"
	"  g.addEventListener('click',function(){zoom(g);});});\n"
	" document.getElementById('unzoom').addEventListener('click',function(){zoom(root);});\n"
	" document.getElementById('search').addEventListener('click',function(){if(term)resetsearch();else asksearch();});\n"
	" window.addEventListener('keydown',function(e){if(e.keyCode===114||((e.ctrlKey||e.metaKey)&&e.keyCode===70)){e.preventDefault();asksearch();}\n"
	"  else if(e.keyCode===27){resetsearch();zoom(root);}});\n"
	" var q=/[?&]s=([^&]*)/.exec(window.location.search||'');if(q)search(decodeURIComponent(q[1]));}\n"
	"function zoom(z){var s0=+z.getAttribute('data-s'),w0=+z.getAttribute('data-w'),d0=+z.getAttribute('data-d');\n"
	" var sc=(W-2*XP)/w0;zoomed=(z===root)?null:z;\n"
	" document.getElementById('unzoom').style.opacity=zoomed?1:0.3;\n"
	" frames.forEach(function(g){var s=+g.getAttribute('data-s'),w=+g.getAttribute('data-w'),d=+g.getAttribute('data-d');\n"
	"  var r=g.childNodes[1],tx=g.lastChild,x,wd;\n"
	"  if(d>=d0&&s>=s0&&s+w<=s0+w0){x=XP+(s-s0)*sc;wd=w*sc;g.style.display='';g.style.opacity='';}\n"
	"  else if(d<d0&&s<=s0&&s+w>=s0+w0){x=XP;wd=W-2*XP;g.style.display='';g.style.opacity=0.5;}\n"
	"  else{g.style.display='none';return;}\n"
	"  r.setAttribute('x',x.toFixed(1));r.setAttribute('width',wd.toFixed(1));tx.setAttribute('x',(x+3).toFixed(1));fit(g,wd);});}\n"
	"function asksearch(){var t=window.prompt('Search for (regular expression):','');if(t)search(t);}\n"
	"function search(t){var re;try{re=new RegExp(t);}catch(e){return;}resetsearch();term=t;var iv=[];\n"
	" frames.forEach(function(g){if(g===root||!re.test(fname(g)))return;var r=g.childNodes[1];\n"
	"  r.setAttribute('data-fill',r.getAttribute('fill'));r.setAttribute('fill','rgb(230,0,230)');\n"
	"  iv.push([+g.getAttribute('data-s'),+g.getAttribute('data-w')]);});\n"
	" iv.sort(function(a,b){return a[0]-b[0]||b[1]-a[1];});var sum=0,end=-1;\n"
	" iv.forEach(function(v){var e=v[0]+v[1];if(v[0]>=end){sum+=v[1];end=e;}else if(e>end){sum+=e-end;end=e;}});\n"
	" matched.textContent='Matched: '+(TOTAL?(100*sum/TOTAL).toFixed(1):'0.0')+'%';\n"
	" document.getElementById('search').textContent='Reset Search';}\n"
	"function resetsearch(){term=null;frames.forEach(function(g){var r=g.childNodes[1];var f=r.getAttribute('data-fill');\n"
	"  if(f){r.setAttribute('fill',f);r.removeAttribute('data-fill');}});matched.textContent=' ';\n"
	" document.getElementById('search').textContent='Search';}\n"
	"window.addEventListener('load',init);\n";

static void sv_header(struct svg *s, const char *title)
{
	const rtd_profile *p = s->p;
	int w = (int)s->width;
	sv_put(s, rtd_buf_printf(
			  &s->b,
			  "<?xml version=\"1.0\" standalone=\"no\"?>\n"
			  "<svg version=\"1.1\" width=\"%d\" height=\"%d\" "
			  "viewBox=\"0 0 %d %d\" "
			  "xmlns=\"http://www.w3.org/2000/svg\" "
			  "data-width=\"%d\" data-total=\"%" PRId64 "\">\n"
			  "<!-- flame graph written by rtdiag %s -->\n"
			  "<style type=\"text/css\">\n"
			  "text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}\n"
			  "#title{text-anchor:middle;font-size:17px}\n"
			  "#legend text{font-size:11px}\n"
			  "g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}\n"
			  ".btn{cursor:pointer}\n"
			  "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n",
			  w, s->height, w, s->height, w, s->total, rtd_version(),
			  FONT_PX));
	sv_put(s, rtd_buf_puts(&s->b, script));
	sv_put(s, rtd_buf_printf(&s->b,
				 "]]></script>\n"
				 "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
				 "fill=\"#f8f8f8\"/>\n"
				 "<text id=\"title\" x=\"%d\" y=\"24\">",
				 w, s->height, w / 2));
	sv_text(s, title, SIZE_MAX);
	char v[32], ns[48];
	sv_put(s, rtd_buf_printf(&s->b,
				 "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\" "
				 "style=\"text-anchor:middle;fill:#555\">%s: %s"
				 " in %s</text>\n",
				 w / 2, p->types[s->type].type,
				 prof_fmt_value(s->total, s->unit, v, sizeof(v)),
				 prof_samples_text(p, ns, sizeof(ns))));
	sv_put(s, rtd_buf_printf(&s->b,
				 "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"24\" "
				 "style=\"opacity:0.3\">Reset Zoom</text>\n"
				 "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" "
				 "style=\"text-anchor:end\">Search</text>\n"
				 "<text id=\"matched\" x=\"%d\" y=\"%d\" "
				 "style=\"text-anchor:end\"> </text>\n"
				 "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
				 XPAD, w - XPAD, w - XPAD, s->height - 10, XPAD,
				 s->height - 10));
}

static void sv_legend(struct svg *s)
{
	/* which kinds are drawn, in one row under the subtitle */
	int x = XPAD;
	sv_put(s, rtd_buf_puts(&s->b, "<g id=\"legend\">\n"));
	for (unsigned k = 0; k < RTD_FRAME_KIND_COUNT; k++) {
		if (!(s->kinds & 1u << k))
			continue;
		const char *name = k == RTD_FRAME_UNKNOWN ? "unknown kind"
							  : rtd_frame_kind_name(k);
		sv_put(s, rtd_buf_printf(&s->b, "<rect x=\"%d\" y=\"47\" "
						"width=\"10\" height=\"10\" fill=\"",
					 x));
		sv_color(s, k, "");
		sv_put(s, rtd_buf_printf(&s->b, "\"/><text x=\"%d\" y=\"56\">%s"
						"</text>\n",
					 x + 13, name));
		x += 13 + (int)(strlen(name) * 6.5) + 14;
	}
	sv_put(s, rtd_buf_puts(&s->b, "</g>\n"));
}

int prof_write_svg(const rtd_profile *p, FILE *f, size_t type,
		   const struct rtd_profile_write_opts *o)
{
	struct ftree t;
	int err = ftree_build(p, type, NULL, NULL, o->thread_roots, &t);
	if (err)
		return err;
	err = ftree_sort_children(p, &t);
	if (err) {
		ftree_free(&t);
		return err;
	}
	struct svg s = {.p = p, .t = &t, .f = f};
	rtd_buf_init(&s.b, 0);
	s.width = o->width ? o->width : 1200;
	if (s.width < 200)
		s.width = 200;
	s.min_width = o->min_width > 0 ? o->min_width : 0.1;
	s.inverted = o->inverted;
	s.unit = p->types[type].unit;
	s.type = type;
	s.total = t.n[0].total;
	s.scale = s.total > 0 ? (s.width - 2 * XPAD) / (double)s.total : 0;
	char title[512];
	prof_title(p, type, o, title, sizeof(title));
	/* one pass to learn the depth (the height), one to draw */
	err = sv_walk(&s, false);
	s.height = TOP_PAD + (int)(s.maxdepth + 1) * FRAME_H + BOTTOM_PAD;
	if (!err) {
		sv_header(&s, title);
		sv_put(&s, rtd_buf_puts(&s.b, "<g id=\"frames\">\n"));
		err = sv_walk(&s, true);
		sv_put(&s, rtd_buf_puts(&s.b, "</g>\n"));
		sv_legend(&s);
		sv_put(&s, rtd_buf_puts(&s.b, "</svg>\n"));
		sv_flush(&s, true);
		err = s.err;
	}
	rtd_buf_free(&s.b);
	ftree_free(&t);
	if (!err && (fflush(f) || ferror(f)))
		err = rtd_write_errno();
	return err;
}
