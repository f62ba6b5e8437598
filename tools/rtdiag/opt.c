/* SPDX-License-Identifier: MIT */
/* opt.c - the table-driven option layer (see opt.h). */
#include "opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rtdiag/common.h"

static void vusage(const struct cli_cmd *cmd, const char *fmt, va_list ap)
{
	cli_progress_done();
	fprintf(stderr, "rtdiag %s: ", cmd->name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'rtdiag help %s'.\n", cmd->name);
}

int cli_cmd_usage(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vusage(cmd, fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

int cli_opt_exit(int rc)
{
	return rc == CLI_OPT_HELP ? CLI_OK : CLI_USAGE;
}

void cli_opt_init(struct cli_parser *p, const struct cli_cmd *cmd, int argc,
		  char **argv)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->i = 1;
}

/* ---- value converters ---------------------------------------------------- */

int cli_parse_int(const char *s, long long *v)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (*end || errno)
		return -1;
	*v = x;
	return 0;
}

/* Both go through the library's one grammar (docs/options.md). */
int cli_parse_duration(const char *s, double *seconds, int64_t *ns)
{
	return rtd_parse_duration(s, ns, seconds, NULL, 0) < 0 ? -1 : 0;
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	return rtd_parse_size(s, bytes, NULL, 0) < 0 ? -1 : 0;
}

static int parse_pids(struct cli_parser *p, const char *s, struct cli_val *v)
{
	size_t n = 0;
	const char *q = s;
	for (;;) {
		char *e;
		errno = 0;
		if (*q < '0' || *q > '9')
			return -1;
		long x = strtol(q, &e, 10);
		if (errno || x <= 0 || x > 0x3fffffff)
			return -1;
		if (n == CLI_MAX_PIDS)
			return -2;
		p->pids[n++] = (pid_t)x;
		if (*e == 0)
			break;
		if (*e != ',')
			return -1;
		q = e + 1;
	}
	v->pids = p->pids;
	v->npids = n;
	return 0;
}

/* Index of s among the '|'-separated words of list, or -1. */
static int choice_index(const char *list, const char *s)
{
	size_t n = strlen(s);
	int k = 0;
	for (const char *w = list; w; k++) {
		const char *bar = strchr(w, '|');
		size_t wl = bar ? (size_t)(bar - w) : strlen(w);
		if (wl == n && strncmp(w, s, n) == 0)
			return k;
		w = bar ? bar + 1 : NULL;
	}
	return -1;
}

/* ---- parsing ------------------------------------------------------------- */

static const char *kind_hint(enum cli_arg a)
{
	switch (a) {
	case CLI_ARG_INT: return "an integer";
	case CLI_ARG_DOUBLE: return "a number";
	case CLI_ARG_DURATION:
		return "a duration: seconds (1.5), 1.5s, 200ms, 2m, 1h or hh:mm:ss";
	case CLI_ARG_SIZE: return "a size: bytes, or 64k, 8M, 1G";
	case CLI_ARG_PIDS: return "a process id, or several separated by commas";
	default: return "a value";
	}
}

/* "--name" or "-n" as the user can type it, for messages. */
static const char *opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->name)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", o->shortname);
	return buf;
}

static int usage(struct cli_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int usage(struct cli_parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vusage(p->cmd, fmt, ap);
	va_end(ap);
	return CLI_OPT_USAGE;
}

static int convert(struct cli_parser *p, const struct cli_opt *o,
		   const char *s, struct cli_val *v)
{
	char lab[64];
	opt_label(o, lab, sizeof(lab));
	v->str = s;
	double num = 0;
	bool check_range = false;
	switch (o->arg) {
	case CLI_ARG_NONE:
	case CLI_ARG_STR:
		return 0;
	case CLI_ARG_INT:
		if (cli_parse_int(s, &v->i) < 0)
			break;
		num = (double)v->i;
		check_range = true;
		break;
	case CLI_ARG_DOUBLE:
		if (rtd_parse_number(s, &v->d, NULL, 0) < 0)
			break;
		num = v->d;
		check_range = true;
		break;
	case CLI_ARG_DURATION:
		if (cli_parse_duration(s, &v->d, &v->ns) < 0)
			break;
		num = v->d;
		check_range = true;
		break;
	case CLI_ARG_SIZE:
		if (cli_parse_size(s, &v->u) < 0)
			break;
		num = (double)v->u;
		check_range = true;
		break;
	case CLI_ARG_PIDS: {
		int rc = parse_pids(p, s, v);
		if (rc == -2)
			return usage(p, "%s: more than %d process ids", lab,
				     CLI_MAX_PIDS);
		if (rc < 0)
			break;
		return 0;
	}
	case CLI_ARG_CHOICE: {
		int k = choice_index(o->meta, s);
		if (k < 0) {
			char list[256];
			snprintf(list, sizeof(list), "%s", o->meta);
			for (char *c = list; *c; c++)
				if (*c == '|')
					*c = ',';
			return usage(p, "%s: '%s' is not one of %s", lab, s,
				     list);
		}
		v->i = k;
		return 0;
	}
	}
	if (!check_range)
		return usage(p, "%s: '%s' is not %s", lab, s, kind_hint(o->arg));
	if ((o->flags & CLI_OPT_POSITIVE) && !(num > 0))
		return usage(p, "%s: '%s' must be more than 0", lab, s);
	if (o->min < o->max && (num < o->min || num > o->max))
		/* an integer's range in digits, not 4.1943e+06 */
		return usage(p, "%s: '%s' is out of range (%.*f to %.*f)", lab,
			     s, o->arg == CLI_ARG_INT ? 0 : 6, o->min,
			     o->arg == CLI_ARG_INT ? 0 : 6, o->max);
	return 0;
}

static const struct cli_opt *find_long(const struct cli_opt *opts,
				       const char *name, size_t len)
{
	for (const struct cli_opt *o = opts; o && o->id; o++)
		if (o->name && strlen(o->name) == len &&
		    strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
	for (const struct cli_opt *o = opts; o && o->id; o++)
		if (o->shortname == c)
			return o;
	return NULL;
}

/* A long option that the unknown one is probably meant to be: the only
 * one it is a prefix of, or one at edit distance 1. */
static const struct cli_opt *suggest(const struct cli_opt *opts,
				     const char *name, size_t len)
{
	const struct cli_opt *hit = NULL;
	int nhits = 0;
	for (const struct cli_opt *o = opts; o && o->id; o++) {
		if (!o->name || (o->flags & CLI_OPT_HIDDEN))
			continue;
		size_t ol = strlen(o->name);
		bool near = len >= 2 && ol > len && strncmp(o->name, name, len) == 0;
		if (!near && (ol == len || ol + 1 == len || ol == len + 1)) {
			/* one substitution, insertion or deletion */
			size_t i = 0, j = 0;
			int edits = 0;
			while (i < len && j < ol && edits <= 1) {
				if (name[i] == o->name[j]) {
					i++, j++;
					continue;
				}
				edits++;
				if (len > ol)
					i++;
				else if (ol > len)
					j++;
				else
					i++, j++;
			}
			edits += (int)(len - i) + (int)(ol - j);
			near = edits == 1;
		}
		if (near) {
			hit = o;
			nhits++;
		}
	}
	return nhits == 1 ? hit : NULL;
}

void cli_cmd_old_spelling(const struct cli_cmd *cmd, const char *old,
			  const char *now)
{
	cli_progress_done();
	fprintf(stderr, "rtdiag %s: note: %s is an old spelling here; say %s "
			"(docs/options.md)\n", cmd->name, old, now);
}

static int take(struct cli_parser *p, const struct cli_opt *o, const char *arg,
		struct cli_val *v)
{
	size_t idx = (size_t)(o - p->cmd->opts);
	char lab[64];
	if (o->flags & CLI_OPT_OLD) {
		/* "-n" or "--count", as typed */
		char old[64];
		if (p->typed)
			snprintf(old, sizeof(old), "-%c", p->typed);
		else
			snprintf(old, sizeof(old), "--%s", o->name);
		cli_cmd_old_spelling(p->cmd, old, o->help);
	}
	if (idx < CLI_MAX_OPTS) {
		if (p->seen[idx] && !(o->flags & CLI_OPT_REPEAT))
			return usage(p, "%s given twice (it takes one value)",
				     opt_label(o, lab, sizeof(lab)));
		p->seen[idx] = 1;
	}
	memset(v, 0, sizeof(*v));
	v->opt = o;
	if (o->arg != CLI_ARG_NONE && arg) {
		int rc = convert(p, o, arg, v);
		if (rc < 0)
			return rc;
	}
	return o->id;
}

/* Whether the word after a CLI_OPT_WAS_FLAG option is its value: there
 * is one, it is no option, and it reads as the option's kind. */
static bool takes_next(const struct cli_parser *p, const struct cli_opt *o)
{
	if (p->i >= p->argc)
		return false;
	const char *s = p->argv[p->i];
	if (s[0] == '-' && s[1])
		return false;
	long long i;
	double d;
	int64_t ns;
	switch (o->arg) {
	case CLI_ARG_INT: return cli_parse_int(s, &i) == 0;
	case CLI_ARG_DURATION: return cli_parse_duration(s, &d, &ns) == 0;
	default: return true;
	}
}

int cli_opt_old_word(struct cli_parser *p, const char *choices, const char *old,
		     const char *now)
{
	if (p->cluster || p->i >= p->argc)
		return -1;
	int k = choice_index(choices, p->argv[p->i]);
	if (k < 0)
		return -1;
	char lab[96], say[96];
	snprintf(lab, sizeof(lab), "%s %s", old, p->argv[p->i]);
	snprintf(say, sizeof(say), "%s %s", now, p->argv[p->i]);
	cli_cmd_old_spelling(p->cmd, lab, say);
	p->i++;
	return k;
}

/* The value of an option that takes one: the rest of its argv word, or
 * the next word. */
static const char *value_for(struct cli_parser *p,
			     const char *attached)
{
	if (attached)
		return attached;
	if (p->i < p->argc)
		return p->argv[p->i++];
	return NULL;
}

static int missing_value(struct cli_parser *p, const struct cli_opt *o)
{
	char lab[64];
	opt_label(o, lab, sizeof(lab));
	if (o->arg == CLI_ARG_CHOICE)
		return usage(p, "%s needs a value (one of %s)", lab, o->meta);
	return usage(p, "%s needs a value (%s)", lab,
		     o->meta ? o->meta : kind_hint(o->arg));
}

static int finish(struct cli_parser *p)
{
	const struct cli_cmd *c = p->cmd;
	if (p->npos < c->min_pos) {
		if (c->args)
			return usage(p, "missing %s", c->args);
		return usage(p, "missing arguments");
	}
	if (c->max_pos >= 0 && p->npos > c->max_pos) {
		const char *extra = p->pos[c->max_pos];
		if (c->flags & CLI_CMD_COMMAND)
			return usage(p, "unexpected '%s' (a program to start "
					"goes after --)", extra);
		if (c->max_pos == 0)
			return usage(p, "unexpected argument '%s'", extra);
		return usage(p, "unexpected argument '%s' (%s takes %d)", extra,
			     c->args ? c->args : "it", c->max_pos);
	}
	return CLI_OPT_DONE;
}

int cli_opt_next(struct cli_parser *p, struct cli_val *v)
{
	const struct cli_opt *opts = p->cmd->opts;
	char lab[64];
	if (p->cluster) {
		/* the rest of "-abc" */
		char c = *p->cluster++;
		const struct cli_opt *o = find_short(opts, c);
		p->typed = c;
		if (!o)
			return usage(p, "unknown option '-%c'", c);
		const char *attached = NULL;
		if (o->arg != CLI_ARG_NONE && *p->cluster)
			attached = p->cluster;
		if (o->arg != CLI_ARG_NONE || !*p->cluster)
			p->cluster = NULL;
		if (o->arg == CLI_ARG_NONE)
			return take(p, o, NULL, v);
		const char *val = value_for(p, attached);
		if (!val)
			return missing_value(p, o);
		return take(p, o, val, v);
	}
	while (p->i < p->argc) {
		char *a = p->argv[p->i++];
		if (p->ended || a[0] != '-' || a[1] == 0) {
			if (p->npos == CLI_MAX_POS)
				return usage(p, "too many arguments");
			p->pos[p->npos++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			if (p->cmd->flags & CLI_CMD_COMMAND) {
				p->rest = p->argv + p->i;
				p->nrest = p->argc - p->i;
				if (p->nrest == 0)
					return usage(p, "nothing after --: give "
							"the COMMAND to start");
				p->i = p->argc;
				break;
			}
			p->ended = true;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			p->typed = 0;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const struct cli_opt *o = find_long(opts, name, len);
			if (!o && len == 4 && strncmp(name, "help", 4) == 0) {
				cli_cmd_help(stdout, p->cmd);
				return CLI_OPT_HELP;
			}
			if (!o) {
				const struct cli_opt *s = suggest(opts, name, len);
				if (s)
					return usage(p, "unknown option '--%.*s' "
							"(did you mean '--%s'?)",
						     (int)len, name, s->name);
				return usage(p, "unknown option '--%.*s'",
					     (int)len, name);
			}
			if (o->arg == CLI_ARG_NONE) {
				if (eq)
					return usage(p, "%s takes no value",
						     opt_label(o, lab, sizeof(lab)));
				return take(p, o, NULL, v);
			}
			if ((o->flags & CLI_OPT_WAS_FLAG) && !eq &&
			    !takes_next(p, o)) {
				char now[96];
				snprintf(lab, sizeof(lab), "--%s alone", o->name);
				snprintf(now, sizeof(now), "--%s %s", o->name,
					 o->meta ? o->meta : "VALUE");
				cli_cmd_old_spelling(p->cmd, lab, now);
				return take(p, o, NULL, v);
			}
			const char *val = value_for(p, eq ? eq + 1 : NULL);
			if (!val)
				return missing_value(p, o);
			return take(p, o, val, v);
		}
		/* "-x", "-xVALUE", "-abc" */
		if (a[1] == 'h' && a[2] == 0 && !find_short(opts, 'h')) {
			cli_cmd_help(stdout, p->cmd);
			return CLI_OPT_HELP;
		}
		p->cluster = a + 1;
		return cli_opt_next(p, v);
	}
	return finish(p);
}

/* ---- help ------------------------------------------------------------- */

void cli_cmd_help(FILE *f, const struct cli_cmd *c)
{
	bool any = false;
	for (const struct cli_opt *o = c->opts; o && o->id; o++)
		if (!(o->flags & CLI_OPT_HIDDEN))
			any = true;
	fprintf(f, "usage: rtdiag %s%s%s%s%s\n", c->name, any ? " [OPTIONS]" : "",
		c->args ? " " : "", c->args ? c->args : "",
		(c->flags & CLI_CMD_COMMAND) ? " [-- COMMAND [ARGS]]" : "");
	if (c->summary)
		fprintf(f, "\n%s%s", c->summary,
			c->summary[strlen(c->summary) - 1] == '\n' ? "" : "\n");
	if (any)
		fprintf(f, "\noptions:\n");
	for (const struct cli_opt *o = c->opts; o && o->id; o++) {
		if (o->flags & CLI_OPT_HIDDEN)
			continue;
		char left[96];
		int n;
		if (o->shortname && o->name)
			n = snprintf(left, sizeof(left), "-%c, --%s", o->shortname,
				     o->name);
		else if (o->name)
			n = snprintf(left, sizeof(left), "    --%s", o->name);
		else
			n = snprintf(left, sizeof(left), "-%c", o->shortname);
		if (o->arg != CLI_ARG_NONE && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - (size_t)n, " %s",
				 o->meta ? o->meta : "VALUE");
		if (strlen(left) <= 26)
			fprintf(f, "  %-26s %s", left, o->help ? o->help : "");
		else
			fprintf(f, "  %s\n  %-26s %s", left, "", o->help ? o->help : "");
		if (o->flags & CLI_OPT_REPEAT)
			fprintf(f, " (repeatable)");
		fputc('\n', f);
	}
	if (any)
		fprintf(f, "  %-26s %s\n", "-h, --help", "this help");
	if (c->details)
		fprintf(f, "\n%s%s", c->details,
			c->details[strlen(c->details) - 1] == '\n' ? "" : "\n");
}

void cli_cmd_dump_opts(FILE *f, const struct cli_cmd *c)
{
	static const char *const kinds[] = {
		[CLI_ARG_NONE] = "none",         [CLI_ARG_STR] = "str",
		[CLI_ARG_INT] = "int",           [CLI_ARG_DOUBLE] = "double",
		[CLI_ARG_DURATION] = "duration", [CLI_ARG_SIZE] = "size",
		[CLI_ARG_PIDS] = "pids",         [CLI_ARG_CHOICE] = "choice",
	};
	for (const struct cli_opt *o = c->opts; o && o->id; o++) {
		char flags[48] = "";
		if (o->flags & CLI_OPT_REPEAT)
			strcat(flags, ",repeat");
		if (o->flags & CLI_OPT_HIDDEN)
			strcat(flags, ",hidden");
		if (o->flags & CLI_OPT_OLD)
			strcat(flags, ",old");
		if (o->flags & CLI_OPT_WAS_FLAG)
			strcat(flags, ",was-flag");
		char sh[3] = {'-', o->shortname, 0};
		fprintf(f, "%s\t%s\t%s%s\t%s\t%s\t%s", c->name, sh,
			o->name ? "--" : "-", o->name ? o->name : "",
			kinds[o->arg], flags[0] ? flags + 1 : "-",
			o->meta ? o->meta : "-");
		if (o->flags & CLI_OPT_OLD) /* what to say now */
			fprintf(f, "\t%s", o->help ? o->help : "-");
		fputc('\n', f);
	}
}

static const struct cli_cmd *find_cmd(const struct cli_cmd *const *cmds,
				      const char *group, const char *sub)
{
	size_t gl = strlen(group);
	for (; *cmds; cmds++) {
		const char *n = (*cmds)->name;
		if (strncmp(n, group, gl) == 0 && n[gl] == ' ' &&
		    strcmp(n + gl + 1, sub) == 0)
			return *cmds;
	}
	return NULL;
}

int cli_group_run(const char *group, const struct cli_cmd *const *cmds,
		  int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(group, "missing subcommand");
	const struct cli_cmd *c = find_cmd(cmds, group, argv[1]);
	if (!c)
		return cli_usage(group, "no subcommand '%s'", argv[1]);
	return c->run(argc - 1, argv + 1);
}

bool cli_group_help(FILE *f, const char *group, const char *summary,
		    const struct cli_cmd *const *cmds, const char *sub)
{
	if (sub) {
		const struct cli_cmd *c = find_cmd(cmds, group, sub);
		if (!c)
			return false;
		cli_cmd_help(f, c);
		return true;
	}
	fprintf(f, "usage: rtdiag %s SUBCOMMAND [OPTIONS] ...\n\n%s\n\n"
		   "subcommands:\n", group, summary);
	size_t gl = strlen(group);
	for (const struct cli_cmd *const *c = cmds; *c; c++) {
		const char *s = (*c)->summary ? (*c)->summary : "";
		const char *nl = strchr(s, '\n');
		fprintf(f, "  %-12s %.*s\n", (*c)->name + gl + 1,
			(int)(nl ? nl - s : (long)strlen(s)), s);
	}
	fprintf(f, "\n'rtdiag help %s SUBCOMMAND' tells more about one.\n", group);
	return true;
}
