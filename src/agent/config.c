/* SPDX-License-Identifier: MIT */
/*
 * config.c - the agent's option table, values from flags and from a YAML
 * file (libyaml's document API), the checks that look at options together,
 * and the effective config written back as YAML.
 *
 * One table names every option; a flag "--NAME VALUE" and a file's
 * "NAME: VALUE" go through the same setter, so every option is both.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/config.h"
#include "common/errmsg.h"
#include "common/log.h"
#include "common/optlib_yaml.h"
#include "rtdiag/flight_recorder.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/nettrace_profiler.h"
#include "rtdiag/trigger.h"

enum opt_id {
	O_LISTEN,
	O_ALLOW_REMOTE,
	O_TLS_CERT,
	O_TLS_KEY,
	O_TLS_CLIENT_CA,
	O_AUTH_TOKEN_FILE,
	O_INSECURE,
	O_TARGET,
	O_WINDOW,
	O_SCAN,
	O_PPROF_PREFIX,
	O_PUSH,
	O_PUSH_QUEUE,
	O_PUSH_TIMEOUT,
	O_PUSH_HEADER,
	O_PUSH_TENANT,
	O_OTLP,
	O_LABEL,
	O_CPU_HZ,
	O_NATIVE_SYMBOLS,
	O_NATIVE_BLOCK,
	O_DOTNET_CPU,
	O_DOTNET_EXTERNAL,
	O_DOTNET_PROFILES,
	O_DOTNET_COUNTERS,
	O_COUNTERS_INTERVAL,
	O_DOTNET_READ_BUFFER,
	O_MAX_TARGETS,
	O_MAX_MEMORY,
	O_MAX_CPU,
	O_MAX_PULL,
	O_LOG_LEVEL,
	O_COUNT
};

static const struct rtd_agent_option options[O_COUNT] = {
	[O_LISTEN] = {"listen", RTD_AGENT_OPT_STR, "ADDR:PORT", "127.0.0.1:4040",
		      "serve /metrics, /targets and pprof here (port 0: any free "
		      "port)"},
	[O_ALLOW_REMOTE] = {"allow-remote", RTD_AGENT_OPT_BOOL, NULL, "false",
			    "allow a listen address other than loopback (with "
			    "TLS or a token, or --insecure)"},
	[O_TLS_CERT] = {"tls-cert", RTD_AGENT_OPT_STR, "FILE", NULL,
			"serve HTTPS with this PEM certificate (chain); "
			"reloaded on SIGHUP"},
	[O_TLS_KEY] = {"tls-key", RTD_AGENT_OPT_STR, "FILE", NULL,
		       "the PEM private key of --tls-cert"},
	[O_TLS_CLIENT_CA] = {"tls-client-ca", RTD_AGENT_OPT_STR, "FILE", NULL,
			     "require client certificates signed by these PEM "
			     "CAs (mutual TLS)"},
	[O_AUTH_TOKEN_FILE] = {"auth-token-file", RTD_AGENT_OPT_STR, "FILE",
			       NULL,
			       "require 'Authorization: Bearer TOKEN' (or Basic "
			       "with TOKEN as the password) on every request; "
			       "reloaded on SIGHUP"},
	[O_INSECURE] = {"insecure", RTD_AGENT_OPT_BOOL, NULL, "false",
			"with --allow-remote: serve without TLS and without a "
			"token (anyone who reaches the port reads everything)"},
	[O_TARGET] = {"target", RTD_AGENT_OPT_LIST, "SPEC", NULL,
		      "profile pid=PID, name=REGEX, cgroup=PATH or dotnet (every "
		      ".NET process), each with an optional ,service=NAME"},
	[O_WINDOW] = {"window", RTD_AGENT_OPT_DURATION, "TIME", "15s",
		      "length of one profile window (one upload per window)"},
	[O_SCAN] = {"scan-interval", RTD_AGENT_OPT_DURATION, "TIME", "2s",
		    "how often to look for targets that started or exited"},
	[O_PPROF_PREFIX] = {"pprof-prefix", RTD_AGENT_OPT_STR, "TEMPLATE",
			    "/targets/{service}",
			    "path before a target's /debug/pprof/...; {service}, "
			    "{pid}, {runtime} and {exe} are replaced"},
	[O_PUSH] = {"push", RTD_AGENT_OPT_STR, "URL", NULL,
		    "push every window to Pyroscope's /ingest at URL"},
	[O_PUSH_QUEUE] = {"push-queue", RTD_AGENT_OPT_INT, "N", "64",
			  "uploads kept while the backend is away; the oldest "
			  "are dropped beyond"},
	[O_PUSH_TIMEOUT] = {"push-timeout", RTD_AGENT_OPT_DURATION, "TIME",
			    "10s", "give up one upload attempt after TIME"},
	[O_PUSH_HEADER] = {"push-header", RTD_AGENT_OPT_LIST, "NAME:VALUE", NULL,
			   "an HTTP header sent with every upload "
			   "(Authorization, ...)"},
	[O_PUSH_TENANT] = {"push-tenant", RTD_AGENT_OPT_STR, "ID", NULL,
			   "tenant of a multi-tenant Pyroscope (X-Scope-OrgID)"},
	[O_OTLP] = {"otlp", RTD_AGENT_OPT_STR, "URL", NULL,
		    "push every window as OpenTelemetry profiles (alpha, "
		    "opentelemetry-proto v1.11.0) over OTLP/HTTP to "
		    "URL/v1development/profiles"},
	[O_LABEL] = {"label", RTD_AGENT_OPT_LIST, "KEY=VALUE", NULL,
		     "a label added to every pushed profile and every metric"},
	[O_CPU_HZ] = {"cpu-hz", RTD_AGENT_OPT_INT, "HZ", "99",
		      "perf sampling frequency of native targets (and .NET ones "
		      "with dotnet-cpu perf)"},
	[O_NATIVE_SYMBOLS] = {"native-symbols", RTD_AGENT_OPT_CHOICE,
			      "functions|full", "functions",
			      "names of sampled native code: functions (symbol "
			      "tables) or full (DWARF too: inlined frames, "
			      "file:line; ~12M more per native target)"},
	[O_NATIVE_BLOCK] = {"native-block", RTD_AGENT_OPT_CHOICE, "on|off", "on",
			    "native targets' /debug/pprof/block: their waits "
			    "off the CPU, from every context switch's stack "
			    "(sched_switch; no BPF)"},
	[O_DOTNET_CPU] = {"dotnet-cpu", RTD_AGENT_OPT_CHOICE,
			  "auto|eventpipe|perf", "auto",
			  ".NET CPU profiles from perf (cpu-hz, mixed native, "
			  "kernel and JIT frames; auto: where perf_event is "
			  "allowed) or from the runtime's sample profiler (1 kHz, "
			  "managed frames, every managed thread stopped at each "
			  "sample)"},
	[O_DOTNET_EXTERNAL] = {"dotnet-cpu-external", RTD_AGENT_OPT_BOOL, NULL,
			       "false",
			       "EventPipe CPU: count time threads spend in "
			       "native code too (idle waits included)"},
	[O_DOTNET_PROFILES] = {"dotnet-profiles", RTD_AGENT_OPT_STR, "KINDS",
			       "cpu,alloc,lock,exception,wait",
			       ".NET profiles to keep, of cpu, alloc, lock, "
			       "exception, wait (.NET 9+, /block) (or none)"},
	[O_DOTNET_COUNTERS] = {"dotnet-counters", RTD_AGENT_OPT_STR, "SPEC",
			       "System.Runtime",
			       ".NET counters for /metrics, in dotnet-counters' "
			       "--counters syntax (or none)"},
	[O_COUNTERS_INTERVAL] = {"counters-interval", RTD_AGENT_OPT_DURATION,
				 "TIME", "5s",
				 "how often .NET processes publish their "
				 "counters"},
	[O_DOTNET_READ_BUFFER] = {"dotnet-read-buffer", RTD_AGENT_OPT_SIZE,
				  "SIZE", "16M",
				  "each .NET session's stream is read at once "
				  "into a buffer of up to SIZE (at least 64k), so "
				  "the runtime never waits for the agent; past it "
				  "the bytes are dropped and the session ends "
				  "damaged (tried again later)"},
	[O_MAX_TARGETS] = {"max-targets", RTD_AGENT_OPT_INT, "N", "64",
			   "profile at most N processes at once"},
	[O_MAX_MEMORY] = {"max-memory", RTD_AGENT_OPT_SIZE, "SIZE", "256M",
			  "the agent's resident memory cap: profiles and "
			  "queued uploads are shed beyond it (the agent alone "
			  "holds about 10M)"},
	[O_MAX_CPU] = {"max-cpu", RTD_AGENT_OPT_PERCENT, "PERCENT", "5%",
		       "the agent's CPU cap (of one CPU): sources are paused "
		       "beyond it"},
	[O_MAX_PULL] = {"max-pull-seconds", RTD_AGENT_OPT_DURATION, "TIME",
			"60s", "longest ?seconds= a pprof request may ask"},
	[O_LOG_LEVEL] = {"log-level", RTD_AGENT_OPT_CHOICE,
			 "error|warn|info|debug", "info", "what to log"},
};

RTD_API const struct rtd_agent_option *rtd_agent_options(size_t *n)
{
	*n = O_COUNT;
	return options;
}

static int seterr(rtd_agent_config *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int seterr(rtd_agent_config *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(c->errmsg, sizeof(c->errmsg), -RTD_E_INVAL, fmt, ap);
	va_end(ap);
	return -RTD_E_INVAL;
}

/* ---- value parsers -------------------------------------------------------- */

/* A decimal number with an optional fraction; *end past it. */
static int parse_number(const char *s, double *v, const char **end)
{
	if (!s || !(*s >= '0' && *s <= '9') )
		return -1;
	char *e;
	errno = 0;
	double d = strtod(s, &e);
	if (errno || e == s || !isfinite(d) || d < 0)
		return -1;
	*v = d;
	*end = e;
	return 0;
}

/* The CLI's grammar (docs/options.md): "8m" is 8 MiB, "00:05:00" five
 * minutes, in the config as on the command line. */
int agent_parse_duration(const char *s, uint64_t *ns)
{
	int64_t v;
	if (rtd_parse_duration(s, &v, NULL, NULL, 0) < 0)
		return -1;
	*ns = (uint64_t)v;
	return 0;
}

int agent_parse_size(const char *s, uint64_t *bytes)
{
	return rtd_parse_size(s, bytes, NULL, 0) < 0 ? -1 : 0;
}

int agent_parse_percent(const char *s, double *pct)
{
	double v;
	const char *e;
	if (parse_number(s, &v, &e))
		return -1;
	if (*e == '%')
		e++;
	if (*e)
		return -1;
	*pct = v;
	return 0;
}

static int parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	if (!s) {
		*b = true;
		return 0;
	}
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -1;
}

static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *v)
{
	if (!s || !(*s >= '0' && *s <= '9'))
		return -1;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 10);
	if (errno || *e || x > max)
		return -1;
	*v = x;
	return 0;
}

/* Index of s among the '|'-separated words of meta, or -1. */
static int choice_index(const char *meta, const char *s)
{
	int i = 0;
	size_t n = strlen(s);
	for (const char *p = meta; p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

/* ---- names ---------------------------------------------------------------- */

bool service_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 128)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      *s == '-'))
			return false;
	return true;
}

bool label_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 128 || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* ---- target specs ------------------------------------------------------------ */

/*
 * glibc compiles a repetition of a repetition ("a++", "(a*)*{9}") into an
 * automaton that grows with each level, to gigabytes: POSIX leaves such
 * patterns undefined, so they are refused, as are very long patterns.
 */
#define SPEC_MAX_REGEX 512

static const char *regex_unsafe(const char *re)
{
	if (strlen(re) > SPEC_MAX_REGEX)
		return "longer than 512 characters";
	bool quant = false; /* the previous item was a repetition */
	int depth = 0;
	bool group_quant[64] = {false};
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			quant = false;
			continue;
		}
		if (*p == '[') { /* a bracket expression is one item */
			const char *q = p + 1;
			if (*q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']')
				q++;
			p = *q ? q : q - 1;
			quant = false;
			continue;
		}
		bool is_q = *p == '*' || *p == '+' || *p == '?' || *p == '{';
		if (is_q && quant)
			return "a repetition of a repetition (undefined in "
			       "POSIX regular expressions)";
		if (*p == '(') {
			if (depth < 63)
				group_quant[++depth] = false;
		} else if (*p == ')' && depth > 0) {
			/* a group holding a repetition, repeated itself */
			bool inner = group_quant[depth--];
			const char *n = p + 1;
			if (inner && (*n == '*' || *n == '+' || *n == '{'))
				return "a repeated group holding a repetition";
		}
		if (is_q && depth > 0)
			group_quant[depth] = true;
		if (*p == '{') {
			while (*p && *p != '}')
				p++;
			if (!*p)
				break;
		}
		quant = is_q;
	}
	return NULL;
}

void spec_clear(struct agent_spec *sp)
{
	if (sp->has_re)
		regfree(&sp->re);
	free(sp->arg);
	free(sp->service);
	agent_flight_free(sp->flight);
	memset(sp, 0, sizeof(*sp));
}

int spec_init(struct agent_spec *sp, enum spec_kind kind, const char *arg,
	      const char *service, char *err, size_t errlen)
{
	memset(sp, 0, sizeof(*sp));
	sp->kind = kind;
	if (service && !service_name_ok(service)) {
		snprintf(err, errlen,
			 "service name '%s': use 1-128 letters, digits, "
			 "'_', '.' or '-'", service);
		return -RTD_E_INVAL;
	}
	switch (kind) {
	case SPEC_PID: {
		unsigned long long v;
		if (parse_uint(arg, 0x3fffffff, &v) || v == 0) {
			snprintf(err, errlen, "pid=%s: not a process id",
				 arg ? arg : "");
			return -RTD_E_INVAL;
		}
		sp->pid = (pid_t)v;
		break;
	}
	case SPEC_NAME: {
		if (!arg || !*arg) {
			snprintf(err, errlen, "name=: give a regular expression");
			return -RTD_E_INVAL;
		}
		const char *why = regex_unsafe(arg);
		if (why) {
			snprintf(err, errlen, "name=%.64s: %s", arg, why);
			return -RTD_E_INVAL;
		}
		int rc = regcomp(&sp->re, arg, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char m[128];
			regerror(rc, &sp->re, m, sizeof(m));
			snprintf(err, errlen, "name=%s: %s", arg, m);
			return -RTD_E_INVAL;
		}
		sp->has_re = true;
		break;
	}
	case SPEC_CGROUP:
		if (!arg || arg[0] != '/') {
			snprintf(err, errlen,
				 "cgroup=%s: give the cgroup's path as "
				 "/proc/PID/cgroup shows it, from '/'",
				 arg ? arg : "");
			return -RTD_E_INVAL;
		}
		break;
	case SPEC_DOTNET:
		break;
	}
	if (kind == SPEC_NAME || kind == SPEC_CGROUP) {
		sp->arg = strdup(arg);
		if (!sp->arg)
			goto nomem;
		/* "/a/b/" and "/a/b" are one cgroup ("/" stays) */
		size_t n = strlen(sp->arg);
		while (kind == SPEC_CGROUP && n > 1 && sp->arg[n - 1] == '/')
			sp->arg[--n] = 0;
	}
	if (service && !(sp->service = strdup(service)))
		goto nomem;
	return 0;
nomem:
	spec_clear(sp);
	return -ENOMEM;
}

const char *spec_text(const struct agent_spec *sp, char *buf, size_t len)
{
	switch (sp->kind) {
	case SPEC_PID:
		snprintf(buf, len, "pid=%d", (int)sp->pid);
		break;
	case SPEC_NAME:
		snprintf(buf, len, "name=%s", sp->arg);
		break;
	case SPEC_CGROUP:
		snprintf(buf, len, "cgroup=%s", sp->arg);
		break;
	case SPEC_DOTNET:
		snprintf(buf, len, "dotnet");
		break;
	}
	return buf;
}

int spec_parse(const char *text, struct agent_spec *sp, char *err,
	       size_t errlen)
{
	static const struct {
		const char *key;
		enum spec_kind kind;
	} kinds[] = {{"pid=", SPEC_PID},
		     {"name=", SPEC_NAME},
		     {"cgroup=", SPEC_CGROUP},
		     {"dotnet", SPEC_DOTNET}};
	char *t = strdup(text ? text : "");
	if (!t)
		return -ENOMEM;
	const char *service = NULL;
	/* ",service=NAME" at the end (a regex may hold commas of its own) */
	char *sv = strstr(t, ",service=");
	while (sv) {
		char *next = strstr(sv + 1, ",service=");
		if (!next)
			break;
		sv = next;
	}
	if (sv) {
		*sv = 0;
		service = sv + strlen(",service=");
	}
	int rc = -RTD_E_INVAL;
	size_t i;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].key);
		if (strncmp(t, kinds[i].key, n))
			continue;
		if (kinds[i].kind == SPEC_DOTNET && t[n]) {
			snprintf(err, errlen,
				 "target '%s': 'dotnet' takes no value", text);
			break;
		}
		rc = spec_init(sp, kinds[i].kind, t + n, service, err, errlen);
		break;
	}
	if (i == sizeof(kinds) / sizeof(kinds[0]))
		snprintf(err, errlen,
			 "target '%s': want pid=PID, name=REGEX, cgroup=PATH "
			 "or dotnet (with an optional ,service=NAME)", text);
	free(t);
	return rc;
}

/* ---- the config --------------------------------------------------------------- */

static int set_default(rtd_agent_config *c, enum opt_id id);

RTD_API rtd_agent_config *rtd_agent_config_new(void)
{
	rtd_agent_config *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->tick_ns = 1000000000ull;
	c->proc_dir = strdup("/proc");
	if (!c->proc_dir)
		goto fail;
	for (int i = 0; i < O_COUNT; i++)
		if (options[i].def && set_default(c, (enum opt_id)i))
			goto fail;
	c->errmsg[0] = 0;
	return c;
fail:
	rtd_agent_config_free(c);
	return NULL;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

RTD_API void rtd_agent_config_free(rtd_agent_config *c)
{
	if (!c)
		return;
	free(c->listen);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->tls_client_ca);
	free(c->auth_token_file);
	for (size_t i = 0; i < c->nspecs; i++)
		spec_clear(&c->specs[i]);
	free(c->specs);
	free(c->pprof_prefix);
	free(c->push);
	free_strv(c->push_headers, c->npush_headers);
	free(c->push_tenant);
	free(c->otlp);
	free(c->dotnet_counters);
	for (size_t i = 0; i < c->nlabels; i++) {
		free(c->labels[i].key);
		free(c->labels[i].val);
	}
	free(c->labels);
	free(c->proc_dir);
	free(c);
}

static int set_str(char **dst, const char *v)
{
	char *s = NULL;
	if (v && *v && !(s = strdup(v)))
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int add_spec(rtd_agent_config *c, struct agent_spec *sp)
{
	if (c->nspecs >= RTD_AGENT_MAX_SPECS) {
		spec_clear(sp);
		return seterr(c, "more than %d targets", RTD_AGENT_MAX_SPECS);
	}
	struct agent_spec *n =
		realloc(c->specs, (c->nspecs + 1) * sizeof(*n));
	if (!n) {
		spec_clear(sp);
		return -ENOMEM;
	}
	c->specs = n;
	c->specs[c->nspecs++] = *sp;
	return 0;
}

static int add_label(rtd_agent_config *c, const char *k, size_t klen,
		     const char *v)
{
	char key[130];
	if (klen >= sizeof(key))
		klen = sizeof(key) - 1;
	memcpy(key, k, klen);
	key[klen] = 0;
	if (!label_name_ok(key))
		return seterr(c,
			      "label '%s': a name of letters, digits and '_' "
			      "that does not start with a digit", key);
	if (strlen(v) > 1024)
		return seterr(c, "label %s: value longer than 1024 bytes", key);
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].key, key))
			return set_str(&c->labels[i].val, v);
	if (c->nlabels >= RTD_AGENT_MAX_LABELS)
		return seterr(c, "more than %d labels", RTD_AGENT_MAX_LABELS);
	struct label *n = realloc(c->labels, (c->nlabels + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->labels = n;
	struct label *l = &c->labels[c->nlabels];
	l->key = strdup(key);
	l->val = strdup(v);
	if (!l->key || !l->val) {
		free(l->key);
		free(l->val);
		return -ENOMEM;
	}
	c->nlabels++;
	return 0;
}

static int add_header(rtd_agent_config *c, const char *v)
{
	const char *colon = strchr(v, ':');
	if (!colon || colon == v || strpbrk(v, "\r\n"))
		return seterr(c, "push-header '%s': want NAME: VALUE on one line",
			      v);
	if (c->npush_headers >= RTD_AGENT_MAX_HEADERS)
		return seterr(c, "more than %d push headers",
			      RTD_AGENT_MAX_HEADERS);
	char **n = realloc(c->push_headers,
			   (c->npush_headers + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->push_headers = n;
	if (!(n[c->npush_headers] = strdup(v)))
		return -ENOMEM;
	c->npush_headers++;
	return 0;
}

static int find_option(const char *name)
{
	char norm[64];
	size_t n = strlen(name);
	if (n >= sizeof(norm))
		return -1;
	for (size_t i = 0; i <= n; i++)
		norm[i] = name[i] == '_' ? '-' : name[i];
	for (int i = 0; i < O_COUNT; i++)
		if (!strcmp(options[i].name, norm))
			return i;
	return -1;
}

/* "cpu,alloc,lock,exception,wait" (or "none") into the
 * RTD_NETTRACE_PROFILE_* bits. */
static int set_kinds(rtd_agent_config *c, const char *v)
{
	unsigned k = 0;
	const char *bad = NULL;
	size_t n = 0;
	if (strcmp(v, "none") && rtd_nettrace_profile_kinds(v, &k, &bad, &n))
		return seterr(c,
			      "dotnet-profiles: '%.*s' is not one of cpu, "
			      "alloc, lock, exception, wait, none", (int)n, bad);
	c->dotnet_kinds = k;
	return 0;
}

/* An option's value as its kind reads it. */
struct opt_value {
	uint64_t u64;           /* duration (ns), size (bytes) */
	unsigned long long ull; /* whole number */
	double d;               /* percentage */
	bool b;
	int ch;                 /* index in a choice's list */
};

/* Read text v (NULL for a flag) as option o's kind into *x. */
static int parse_opt_value(rtd_agent_config *c,
			   const struct rtd_agent_option *o, const char *v,
			   struct opt_value *x)
{
	const char *name = o->name;
	char why[96];
	int64_t dur;
	if (!v && o->kind != RTD_AGENT_OPT_BOOL)
		return seterr(c, "%s: needs a value (%s)", name,
			      o->meta ? o->meta : "text");
	switch (o->kind) {
	case RTD_AGENT_OPT_BOOL:
		if (parse_bool(v, &x->b))
			return seterr(c, "%s: '%s' is not true or false", name,
				      v);
		break;
	case RTD_AGENT_OPT_INT:
		if (parse_uint(v, 1000000000ull, &x->ull))
			return seterr(c, "%s: '%s' is not a whole number", name,
				      v);
		break;
	case RTD_AGENT_OPT_DURATION:
		if (rtd_parse_duration(v, &dur, NULL, why, sizeof(why)))
			return seterr(c, "%s: '%s' is not a duration (15s, "
				      "500ms, 2m, 00:01:30, or seconds): %s",
				      name, v, why);
		x->u64 = (uint64_t)dur;
		break;
	case RTD_AGENT_OPT_SIZE:
		if (rtd_parse_size(v, &x->u64, why, sizeof(why)))
			return seterr(c, "%s: '%s' is not a size (256M, 64k, "
				      "8m, or bytes): %s", name, v, why);
		break;
	case RTD_AGENT_OPT_PERCENT:
		if (agent_parse_percent(v, &x->d))
			return seterr(c, "%s: '%s' is not a percentage (5%%)",
				      name, v);
		break;
	case RTD_AGENT_OPT_CHOICE:
		x->ch = choice_index(o->meta, v);
		if (x->ch < 0)
			return seterr(c, "%s: '%s' is not one of %s", name, v,
				      o->meta);
		break;
	case RTD_AGENT_OPT_STR:
	case RTD_AGENT_OPT_LIST:
		break;
	}
	return 0;
}

/* pprof-prefix: a URL path; "/x/" and "/x" are one prefix, "/" none. */
static int set_pprof_prefix(rtd_agent_config *c, const char *v)
{
	if (v[0] != '/' || strpbrk(v, "?# \t\r\n"))
		return seterr(c,
			      "pprof-prefix '%s': a URL path starting "
			      "with '/', without '?', '#' or blanks", v);
	if (!strcmp(v, "/"))
		v = "";
	char *s = strdup(v);
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		s[--n] = 0;
	free(c->pprof_prefix);
	c->pprof_prefix = s;
	return 0;
}

/* A duration option between lo and 1h ns; lo_text names lo. */
static int set_ns_upto_1h(rtd_agent_config *c, const char *name,
			  const char *v, uint64_t u64, uint64_t lo,
			  const char *lo_text, uint64_t *out)
{
	if (u64 < lo || u64 > 3600000000000ull)
		return seterr(c, "%s: %s is outside %s..1h", name, v, lo_text);
	*out = u64;
	return 0;
}

/* Set option id from text v (NULL for a flag). */
static int set_opt(rtd_agent_config *c, enum opt_id id, const char *v)
{
	const struct rtd_agent_option *o = &options[id];
	struct opt_value x = {.ch = -1};
	int rc = parse_opt_value(c, o, v, &x);
	if (rc)
		return rc;
	uint64_t u64 = x.u64;
	unsigned long long ull = x.ull;
	double d = x.d;
	bool b = x.b;
	int ch = x.ch;

	switch (id) {
	case O_LISTEN:
		if (!*v)
			return seterr(c, "listen: give ADDR:PORT");
		return set_str(&c->listen, v);
	case O_ALLOW_REMOTE:
		c->allow_remote = b;
		return 0;
	case O_TLS_CERT:
		return set_str(&c->tls_cert, v);
	case O_TLS_KEY:
		return set_str(&c->tls_key, v);
	case O_TLS_CLIENT_CA:
		return set_str(&c->tls_client_ca, v);
	case O_AUTH_TOKEN_FILE:
		return set_str(&c->auth_token_file, v);
	case O_INSECURE:
		c->insecure = b;
		return 0;
	case O_TARGET: {
		struct agent_spec sp;
		int rc = spec_parse(v, &sp, c->errmsg, sizeof(c->errmsg));
		return rc ? rc : add_spec(c, &sp);
	}
	case O_WINDOW:
		return set_ns_upto_1h(c, "window", v, u64, 1000000000ull, "1s",
				      &c->window_ns);
	case O_SCAN:
		return set_ns_upto_1h(c, "scan-interval", v, u64, 100000000ull,
				      "100ms", &c->scan_ns);
	case O_PPROF_PREFIX:
		return set_pprof_prefix(c, v);
	case O_PUSH:
		return set_str(&c->push, v);
	case O_PUSH_QUEUE:
		if (ull < 1 || ull > 100000)
			return seterr(c, "push-queue: %s is outside 1..100000",
				      v);
		c->push_queue = (unsigned)ull;
		return 0;
	case O_PUSH_TIMEOUT:
		if (u64 < 100000000ull)
			return seterr(c, "push-timeout: %s is under 100ms", v);
		c->push_timeout_ns = u64;
		return 0;
	case O_PUSH_HEADER:
		return add_header(c, v);
	case O_PUSH_TENANT:
		if (strpbrk(v, "\r\n"))
			return seterr(c, "push-tenant: one line, please");
		return set_str(&c->push_tenant, v);
	case O_OTLP:
		return set_str(&c->otlp, v);
	case O_LABEL: {
		const char *eq = strchr(v, '=');
		if (!eq)
			return seterr(c, "label '%s': want KEY=VALUE", v);
		return add_label(c, v, (size_t)(eq - v), eq + 1);
	}
	case O_CPU_HZ:
		if (ull < 1 || ull > 10000)
			return seterr(c, "cpu-hz: %s is outside 1..10000", v);
		c->cpu_hz = (unsigned)ull;
		return 0;
	case O_NATIVE_SYMBOLS:
		c->native_dwarf = ch == 1;
		return 0;
	case O_NATIVE_BLOCK:
		c->native_block = ch == 0;
		return 0;
	case O_DOTNET_CPU:
		c->dotnet_cpu = (enum dotnet_cpu_source)ch;
		return 0;
	case O_DOTNET_EXTERNAL:
		c->dotnet_cpu_external = b;
		return 0;
	case O_DOTNET_PROFILES:
		return set_kinds(c, v);
	case O_DOTNET_COUNTERS:
		if (!strcmp(v, "none") || !*v) {
			free(c->dotnet_counters);
			c->dotnet_counters = NULL;
			return 0;
		}
		return set_str(&c->dotnet_counters, v);
	case O_COUNTERS_INTERVAL:
		return set_ns_upto_1h(c, "counters-interval", v, u64,
				      1000000000ull, "1s",
				      &c->counters_interval_ns);
	case O_DOTNET_READ_BUFFER:
		if (u64 < RTD_IPC_SPOOL_CAP_MIN || u64 > SIZE_MAX)
			return seterr(c, "dotnet-read-buffer: %s is under 64k", v);
		c->dotnet_read_buffer = u64;
		return 0;
	case O_MAX_TARGETS:
		if (ull < 1 || ull > RTD_AGENT_MAX_TARGETS)
			return seterr(c, "max-targets: %s is outside 1..%d", v,
				      RTD_AGENT_MAX_TARGETS);
		c->max_targets = (unsigned)ull;
		return 0;
	case O_MAX_MEMORY:
		if (u64 < (1u << 20))
			return seterr(c, "max-memory: %s is under 1M", v);
		c->max_memory = u64;
		return 0;
	case O_MAX_CPU:
		if (d < 0.1 || d > 800)
			return seterr(c, "max-cpu: %s is outside 0.1%%..800%%", v);
		c->max_cpu = d;
		return 0;
	case O_MAX_PULL:
		return set_ns_upto_1h(c, "max-pull-seconds", v, u64,
				      1000000000ull, "1s", &c->max_pull_ns);
	case O_LOG_LEVEL:
		c->log_level = ch;
		return 0;
	case O_COUNT:
		break;
	}
	return -RTD_E_INVAL;
}

static int set_default(rtd_agent_config *c, enum opt_id id)
{
	return set_opt(c, id, options[id].def);
}

RTD_API int rtd_agent_config_set(rtd_agent_config *c, const char *name,
				 const char *value)
{
	c->errmsg[0] = 0;
	int id = name ? find_option(name) : -1;
	if (id < 0) {
		snprintf(c->errmsg, sizeof(c->errmsg), "no option '%s'",
			 name ? name : "");
		return -RTD_E_NOTFOUND;
	}
	return set_opt(c, (enum opt_id)id, value);
}

RTD_API enum rtd_log_level
rtd_agent_config_log_level(const rtd_agent_config *c)
{
	return (enum rtd_log_level)c->log_level;
}

RTD_API const char *rtd_agent_config_errmsg(const rtd_agent_config *c)
{
	return c->errmsg;
}

/* ---- YAML ------------------------------------------------------------------------ */

struct yctx {
	rtd_agent_config *c;
	yaml_document_t *doc;
	const char *origin;
};

/* Prefix the message set by a setter with where the node is. */
static int at(struct yctx *y, const yaml_node_t *n, int rc)
{
	if (rc == -ENOMEM)
		return rc;
	char m[sizeof(y->c->errmsg)];
	snprintf(m, sizeof(m), "%s", y->c->errmsg);
	snprintf(y->c->errmsg, sizeof(y->c->errmsg), "%.60s:%zu:%zu: %.400s",
		 y->origin, (size_t)n->start_mark.line + 1,
		 (size_t)n->start_mark.column + 1, m);
	return rc;
}

static int yerr(struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int yerr(struct yctx *y, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(y->c->errmsg, sizeof(y->c->errmsg), -RTD_E_INVAL, fmt, ap);
	va_end(ap);
	return at(y, n, -RTD_E_INVAL);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
						: NULL;
}

/* One value of a flight: key. */
static int flight_value(struct yctx *y, struct agent_flight *f, const char *ks,
			const char *vs, const yaml_node_t *v)
{
	uint64_t *dur = !strcmp(ks, "ring")       ? &f->ring_ns
			: !strcmp(ks, "post")     ? &f->post_ns
			: !strcmp(ks, "cooldown") ? &f->cooldown_ns
			: !strcmp(ks, "interval") ? &f->interval_ns
						  : NULL;
	uint64_t *size = !strcmp(ks, "max-size")     ? &f->keep_bytes
			 : !strcmp(ks, "max-memory") ? &f->max_memory
						     : NULL;
	if (dur) {
		if (agent_parse_duration(vs, dur) || *dur > 86400000000000ull ||
		    (dur == &f->ring_ns && !*dur))
			return yerr(y, v, "flight: %s: want a duration (8s, 1m)", ks);
	} else if (size) {
		if (agent_parse_size(vs, size) ||
		    (size == &f->max_memory && *size && *size < RTD_FLIGHT_MIN_MAX_BYTES))
			return yerr(y, v, "flight: %s: want a size (64M, 1G)%s", ks,
				    size == &f->max_memory ? ", at least 1M" : "");
	} else if (!strcmp(ks, "max-snapshots")) {
		unsigned long long n;
		if (parse_uint(vs, 1000000, &n) || !n)
			return yerr(y, v, "flight: max-snapshots: want 1 to 1000000");
		f->max_snapshots = n;
	} else if (!strcmp(ks, "dir") || !strcmp(ks, "providers")) {
		char **dst = ks[0] == 'd' ? &f->dir : &f->providers;
		if (set_str(dst, vs))
			return -ENOMEM;
	} else if (!strcmp(ks, "format")) {
		f->format = rtd_timeline_format_from_name(vs);
		if (f->format != RTD_TIMELINE_FMT_PERFETTO &&
		    f->format != RTD_TIMELINE_FMT_CHROME_JSON)
			return yerr(y, v, "flight: format: want perfetto or chrome-json");
	} else if (!strcmp(ks, "trigger")) {
		if (f->ntriggers == RTD_FLIGHT_MAX_TRIGGERS)
			return yerr(y, v, "flight: at most %u triggers", RTD_FLIGHT_MAX_TRIGGERS);
		char err[256] = "";
		rtd_trigger *t = NULL;
		int rc = rtd_trigger_parse(vs, &t, err, sizeof(err));
		rtd_trigger_free(t);
		if (rc)
			return yerr(y, v, "flight: trigger '%s': %s", vs,
				    err[0] ? err : rtd_strerror(rc));
		char **n = realloc(f->triggers, (f->ntriggers + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->triggers = n;
		if (!(n[f->ntriggers] = strdup(vs)))
			return -ENOMEM;
		f->ntriggers++;
	} else if (!strcmp(ks, "actions")) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", vs);
		for (char *sv, *w = strtok_r(buf, ", ", &sv); w; w = strtok_r(NULL, ", ", &sv)) {
			unsigned act = rtd_flight_action_from_name(w);
			if (!act)
				return yerr(y, v, "flight: action '%s': want folded, "
						  "pprof, dump, stacks or gcdump", w);
			f->actions |= act;
		}
	} else {
		return yerr(y, v, "flight key '%s': want ring, trigger, post, cooldown, "
				  "interval, max-snapshots, max-size, max-memory, dir, "
				  "format, providers or actions", ks);
	}
	return 0;
}

/* A target's flight: {ring: 8s, trigger: [...], dir: ..., ...} */
static int flight_map(struct yctx *y, yaml_node_t *n, struct agent_flight **out)
{
	if (n->type != YAML_MAPPING_NODE)
		return yerr(y, n, "flight: want a mapping {ring: 8s, dir: ...}");
	struct agent_flight *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	int rc = 0;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top && !rc; pr++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
		const char *ks = scalar(k);
		if (!ks) {
			rc = yerr(y, n, "flight: keys are plain text");
		} else if (v->type == YAML_SEQUENCE_NODE &&
			   (!strcmp(ks, "trigger") || !strcmp(ks, "actions"))) {
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top && !rc; it++) {
				yaml_node_t *e = yaml_document_get_node(y->doc, *it);
				rc = scalar(e) ? flight_value(y, f, ks, scalar(e), e)
					       : yerr(y, e, "flight: %s: want text entries", ks);
			}
		} else if (!scalar(v)) {
			rc = yerr(y, v, "flight: %s: want one value", ks);
		} else {
			rc = flight_value(y, f, ks, scalar(v), v);
		}
	}
	if (!rc && !f->ring_ns)
		rc = yerr(y, n, "flight: give the ring (ring: 8s)");
	if (!rc && !f->dir)
		rc = yerr(y, n, "flight: give the folder snapshots go to (dir: PATH)");
	if (rc) {
		agent_flight_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void agent_flight_free(struct agent_flight *f)
{
	if (!f)
		return;
	free(f->dir);
	free(f->providers);
	free_strv(f->triggers, f->ntriggers);
	free(f);
}

struct agent_flight *agent_flight_dup(const struct agent_flight *f)
{
	struct agent_flight *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *f;
	d->dir = d->providers = NULL;
	d->triggers = NULL;
	d->ntriggers = 0;
	if (set_str(&d->dir, f->dir) || set_str(&d->providers, f->providers) ||
	    (f->ntriggers && !(d->triggers = calloc(f->ntriggers, sizeof(char *)))))
		goto fail;
	for (; d->ntriggers < f->ntriggers; d->ntriggers++)
		if (!(d->triggers[d->ntriggers] = strdup(f->triggers[d->ntriggers])))
			goto fail;
	return d;
fail:
	agent_flight_free(d);
	return NULL;
}

/* A target given as a mapping: {pid: N} {name: RE} {cgroup: P} {dotnet: true}
 * with an optional service. */
static int target_map(struct yctx *y, yaml_node_t *n)
{
	const char *service = NULL, *arg = NULL;
	enum spec_kind kind = 0;
	yaml_node_pair_t *pr;
	struct agent_flight *fl = NULL;
	int rc;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
		const char *ks = scalar(k), *vs = scalar(v);
		if (ks && !strcmp(ks, "flight")) {
			if (fl) {
				agent_flight_free(fl);
				return yerr(y, k, "one flight: a target");
			}
			if ((rc = flight_map(y, v, &fl)))
				return rc;
			continue;
		}
		if (!ks || !vs) {
			agent_flight_free(fl);
			return yerr(y, k ? k : n,
				    "a target's keys and values are plain text");
		}
		enum spec_kind kk = 0;
		if (!strcmp(ks, "service")) {
			service = vs;
			continue;
		} else if (!strcmp(ks, "pid"))
			kk = SPEC_PID;
		else if (!strcmp(ks, "name"))
			kk = SPEC_NAME;
		else if (!strcmp(ks, "cgroup"))
			kk = SPEC_CGROUP;
		else if (!strcmp(ks, "dotnet")) {
			bool b;
			if (parse_bool(vs, &b) || !b) {
				agent_flight_free(fl);
				return yerr(y, v, "dotnet: want true");
			}
			kk = SPEC_DOTNET;
		}
		if (!kk || kind) {
			agent_flight_free(fl);
			return kind ? yerr(y, k, "a target has one of pid, name, "
						 "cgroup or dotnet")
				    : yerr(y, k, "target key '%s': want pid, name, "
						 "cgroup, dotnet, service or flight", ks);
		}
		kind = kk;
		arg = vs;
	}
	if (!kind) {
		agent_flight_free(fl);
		return yerr(y, n, "target: give pid, name, cgroup or dotnet");
	}
	struct agent_spec sp;
	rc = spec_init(&sp, kind, arg, service, y->c->errmsg,
		       sizeof(y->c->errmsg));
	if (!rc) {
		sp.flight = fl;
		fl = NULL;
		rc = add_spec(y->c, &sp);
	}
	agent_flight_free(fl);
	return rc ? at(y, n, rc) : 0;
}

/* One value (scalar, or for lists a sequence/mapping) of option id. */
static int yaml_value(struct yctx *y, enum opt_id id, yaml_node_t *v)
{
	const struct rtd_agent_option *o = &options[id];
	if (v->type == YAML_SCALAR_NODE) {
		const char *s = scalar(v);
		/* an empty list value ("target:") sets nothing */
		if (o->kind == RTD_AGENT_OPT_LIST && !*s)
			return 0;
		int rc = set_opt(y->c, id, s);
		return rc ? at(y, v, rc) : 0;
	}
	if (o->kind != RTD_AGENT_OPT_LIST)
		return yerr(y, v, "%s: want one value, not a %s", o->name,
			    v->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
	if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(y->doc, *it);
			int rc;
			if (id == O_TARGET && e->type == YAML_MAPPING_NODE)
				rc = target_map(y, e);
			else if (e->type == YAML_SCALAR_NODE) {
				rc = set_opt(y->c, id, scalar(e));
				rc = rc ? at(y, e, rc) : 0;
			} else
				rc = yerr(y, e, "%s: want text entries",
					  o->name);
			if (rc)
				return rc;
		}
		return 0;
	}
	/* a mapping: label {k: v}, push-header {Name: value}, one target */
	if (id == O_TARGET)
		return target_map(y, v);
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start;
	     pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
		yaml_node_t *e = yaml_document_get_node(y->doc, pr->value);
		const char *ks = scalar(k), *vs = scalar(e);
		if (!ks || !vs)
			return yerr(y, k, "%s: want NAME: VALUE entries",
				    o->name);
		int rc;
		if (id == O_LABEL) {
			rc = add_label(y->c, ks, strlen(ks), vs);
		} else {
			char line[2048];
			snprintf(line, sizeof(line), "%s: %s", ks, vs);
			rc = add_header(y->c, line);
		}
		if (rc)
			return at(y, k, rc);
	}
	return 0;
}

RTD_API int rtd_agent_config_load_text(rtd_agent_config *c, const char *text,
				       size_t len, const char *origin)
{
	c->errmsg[0] = 0;
	if (!origin)
		origin = "config";
	if (len > RTD_AGENT_MAX_CONFIG)
		return seterr(c, "%s: larger than %u bytes", origin,
			      RTD_AGENT_MAX_CONFIG);
	char why[256];
	if (rtd_optlib_open_yaml(why, sizeof(why)) < 0)
		return seterr(c, "%s: %s", origin, why);
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		int rc = seterr(c, "%s:%zu:%zu: %s%s%s", origin,
				(size_t)p.problem_mark.line + 1,
				(size_t)p.problem_mark.column + 1,
				p.problem ? p.problem : "not YAML",
				p.context ? " " : "",
				p.context ? p.context : "");
		yaml_parser_delete(&p);
		return rc;
	}
	struct yctx y = {c, &doc, origin};
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		/* an empty file sets nothing */
	} else if (root->type != YAML_MAPPING_NODE) {
		rc = yerr(&y, root, "want a mapping of option names to values");
	} else {
		for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
		     !rc && pr < root->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
			yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
			const char *ks = scalar(k);
			int id = ks ? find_option(ks) : -1;
			if (id < 0)
				rc = yerr(&y, k, "no option '%s'",
					  ks ? ks : "(not text)");
			else
				rc = yaml_value(&y, (enum opt_id)id, v);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return rc;
}

RTD_API int rtd_agent_config_load(rtd_agent_config *c, const char *path)
{
	c->errmsg[0] = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(c->errmsg, sizeof(c->errmsg), "%s: %s", path,
			 strerror(e));
		return -e;
	}
	char *buf = malloc(RTD_AGENT_MAX_CONFIG + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, RTD_AGENT_MAX_CONFIG + 1, f);
	int bad = ferror(f);
	fclose(f);
	int rc;
	if (bad)
		rc = seterr(c, "%s: read error", path);
	else
		rc = rtd_agent_config_load_text(c, buf, n, path);
	free(buf);
	return rc;
}

/* ---- checks -------------------------------------------------------------------- */

int agent_split_hostport(const char *s, char *h, size_t hlen, unsigned *port)
{
	const char *colon;
	const char *hs = s;
	size_t hl;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -1;
		hs = s + 1;
		hl = (size_t)(rb - hs);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
		if (memchr(s, ':', hl))
			return -1; /* a bare IPv6 address needs brackets */
	}
	unsigned long long p;
	if (hl == 0 || hl >= hlen || parse_uint(colon + 1, 65535, &p))
		return -1;
	memcpy(h, hs, hl);
	h[hl] = 0;
	*port = (unsigned)p;
	return 0;
}

bool agent_host_is_loopback(const char *host)
{
	return !strcmp(host, "localhost") || !strncmp(host, "127.", 4) ||
	       !strcmp(host, "::1");
}

RTD_API int rtd_agent_config_check(rtd_agent_config *c)
{
	c->errmsg[0] = 0;
	char host[256];
	unsigned port;
	if (!c->listen || agent_split_hostport(c->listen, host, sizeof(host),
					       &port))
		return seterr(c,
			      "listen '%s': want ADDR:PORT (127.0.0.1:4040, "
			      "[::1]:4040)", c->listen ? c->listen : "");
	if (!agent_host_is_loopback(host) && !c->allow_remote)
		return seterr(c,
			      "listen %s: not a loopback address; anyone who "
			      "can reach it reads your profiles: add "
			      "--allow-remote to mean it", c->listen);
	if (!c->tls_cert != !c->tls_key)
		return seterr(c, "tls-cert and tls-key go together");
	if (c->tls_client_ca && !c->tls_cert)
		return seterr(c, "tls-client-ca needs tls-cert and tls-key");
	if (c->allow_remote && !c->tls_cert && !c->auth_token_file &&
	    !c->insecure)
		return seterr(c,
			      "allow-remote without TLS or a token: anyone who "
			      "reaches the port reads every target's profiles, "
			      "paths and cgroups; give --tls-cert/--tls-key "
			      "and/or --auth-token-file, or --insecure to mean "
			      "it");
	if (c->nspecs == 0)
		return seterr(c, "no target: give --target pid=PID, name=REGEX, "
				 "cgroup=PATH or dotnet");
	static const char *const urls[] = {"push", "otlp"};
	const char *vals[] = {c->push, c->otlp};
	for (int i = 0; i < 2; i++)
		if (vals[i] && strncmp(vals[i], "http://", 7) &&
		    strncmp(vals[i], "https://", 8))
			return seterr(c, "%s '%s': want an http:// or https:// "
					 "URL", urls[i], vals[i]);
	if (c->window_ns < c->tick_ns)
		return seterr(c, "window: shorter than the 1 s tick");
	if (c->max_pull_ns < 1000000000ull)
		return seterr(c, "max-pull-seconds: under 1 s");
	return 0;
}

/* ---- writing back ------------------------------------------------------------- */

static void yq(FILE *f, const char *s)
{
	if (!s)
		s = "";
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		/* YAML folds the Unicode line breaks NEL, LS and PS found raw
		 * in a quoted scalar: they are written as escapes */
		if (ch == 0xc2 && (unsigned char)s[1] == 0x85) {
			fputs("\\N", f);
			s++;
		} else if (ch == 0xe2 && (unsigned char)s[1] == 0x80 &&
			   ((unsigned char)s[2] == 0xa8 ||
			    (unsigned char)s[2] == 0xa9)) {
			fputs((unsigned char)s[2] == 0xa8 ? "\\L" : "\\P", f);
			s += 2;
		} else if (ch == '"' || ch == '\\') {
			fprintf(f, "\\%c", ch);
		} else if (ch < 0x20 || ch == 0x7f) {
			fprintf(f, "\\x%02x", ch);
		} else {
			fputc(ch, f);
		}
	}
	fputc('"', f);
}

static void ydur(FILE *f, const char *key, uint64_t ns)
{
	if (ns % 1000000000ull == 0)
		fprintf(f, "%s: %llus\n", key,
			(unsigned long long)(ns / 1000000000ull));
	else
		fprintf(f, "%s: %llums\n", key,
			(unsigned long long)(ns / 1000000ull));
}

/* A duration as ydur() writes it, inline. */
static void fdur(FILE *f, const char *key, uint64_t ns)
{
	if (ns % 1000000000ull == 0)
		fprintf(f, ", %s: %llus", key, (unsigned long long)(ns / 1000000000ull));
	else
		fprintf(f, ", %s: %llums", key, (unsigned long long)(ns / 1000000ull));
}

/* ", flight: {...}", reading back to the same section */
static void flight_write(FILE *f, const struct agent_flight *fl)
{
	fprintf(f, ", flight: {dir: ");
	yq(f, fl->dir);
	fdur(f, "ring", fl->ring_ns);
	if (fl->post_ns)
		fdur(f, "post", fl->post_ns);
	if (fl->cooldown_ns)
		fdur(f, "cooldown", fl->cooldown_ns);
	if (fl->interval_ns)
		fdur(f, "interval", fl->interval_ns);
	if (fl->max_snapshots)
		fprintf(f, ", max-snapshots: %llu", (unsigned long long)fl->max_snapshots);
	if (fl->keep_bytes)
		fprintf(f, ", max-size: %lluk", (unsigned long long)(fl->keep_bytes / 1024));
	if (fl->max_memory)
		fprintf(f, ", max-memory: %lluk", (unsigned long long)(fl->max_memory / 1024));
	if (fl->format)
		fprintf(f, ", format: %s", rtd_timeline_format_name(fl->format));
	if (fl->providers) {
		fprintf(f, ", providers: ");
		yq(f, fl->providers);
	}
	if (fl->ntriggers) {
		fprintf(f, ", trigger: [");
		for (size_t i = 0; i < fl->ntriggers; i++) {
			if (i)
				fprintf(f, ", ");
			yq(f, fl->triggers[i]);
		}
		fprintf(f, "]");
	}
	if (fl->actions) {
		fprintf(f, ", actions: [");
		for (unsigned i = 0, n = 0; i < RTD_FLIGHT_ACT_COUNT; i++)
			if (fl->actions & (1u << i))
				fprintf(f, "%s%s", n++ ? ", " : "", rtd_flight_action_name(1u << i));
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

static const char *choice_word(const char *meta, int idx, char *buf,
			       size_t len)
{
	const char *p = meta;
	for (int i = 0; i < idx && p; i++) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	if (!p)
		return "";
	const char *bar = strchr(p, '|');
	size_t n = bar ? (size_t)(bar - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

RTD_API int rtd_agent_config_write(const rtd_agent_config *c, FILE *f)
{
	char w[32];
	fprintf(f, "listen: ");
	yq(f, c->listen);
	fprintf(f, "\nallow-remote: %s\n", c->allow_remote ? "true" : "false");
	const char *const files[][2] = {{"tls-cert", c->tls_cert},
					{"tls-key", c->tls_key},
					{"tls-client-ca", c->tls_client_ca},
					{"auth-token-file", c->auth_token_file}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i][1]) {
			fprintf(f, "%s: ", files[i][0]);
			yq(f, files[i][1]);
			fputc('\n', f);
		}
	if (c->insecure)
		fprintf(f, "insecure: true\n");
	fprintf(f, "target:\n");
	for (size_t i = 0; i < c->nspecs; i++) {
		const struct agent_spec *sp = &c->specs[i];
		fprintf(f, "  - {");
		switch (sp->kind) {
		case SPEC_PID:
			fprintf(f, "pid: %d", (int)sp->pid);
			break;
		case SPEC_NAME:
			fprintf(f, "name: ");
			yq(f, sp->arg);
			break;
		case SPEC_CGROUP:
			fprintf(f, "cgroup: ");
			yq(f, sp->arg);
			break;
		case SPEC_DOTNET:
			fprintf(f, "dotnet: true");
			break;
		}
		if (sp->service) {
			fprintf(f, ", service: ");
			yq(f, sp->service);
		}
		if (sp->flight)
			flight_write(f, sp->flight);
		fprintf(f, "}\n");
	}
	ydur(f, "window", c->window_ns);
	ydur(f, "scan-interval", c->scan_ns);
	fprintf(f, "pprof-prefix: ");
	yq(f, c->pprof_prefix && *c->pprof_prefix ? c->pprof_prefix : "/");
	fputc('\n', f);
	if (c->push) {
		fprintf(f, "push: ");
		yq(f, c->push);
		fputc('\n', f);
	}
	fprintf(f, "push-queue: %u\n", c->push_queue);
	ydur(f, "push-timeout", c->push_timeout_ns);
	if (c->npush_headers) {
		fprintf(f, "push-header:\n");
		for (size_t i = 0; i < c->npush_headers; i++) {
			fprintf(f, "  - ");
			yq(f, c->push_headers[i]);
			fputc('\n', f);
		}
	}
	if (c->push_tenant) {
		fprintf(f, "push-tenant: ");
		yq(f, c->push_tenant);
		fputc('\n', f);
	}
	if (c->otlp) {
		fprintf(f, "otlp: ");
		yq(f, c->otlp);
		fputc('\n', f);
	}
	if (c->nlabels) {
		fprintf(f, "label:\n");
		for (size_t i = 0; i < c->nlabels; i++) {
			fprintf(f, "  %s: ", c->labels[i].key);
			yq(f, c->labels[i].val);
			fputc('\n', f);
		}
	}
	fprintf(f, "cpu-hz: %u\n", c->cpu_hz);
	fprintf(f, "native-symbols: %s\n", c->native_dwarf ? "full" : "functions");
	fprintf(f, "native-block: %s\n", c->native_block ? "on" : "off");
	fprintf(f, "dotnet-cpu: %s\n",
		choice_word(options[O_DOTNET_CPU].meta, (int)c->dotnet_cpu, w,
			    sizeof(w)));
	fprintf(f, "dotnet-cpu-external: %s\n",
		c->dotnet_cpu_external ? "true" : "false");
	fprintf(f, "dotnet-profiles: ");
	bool any = false;
	for (unsigned b = 1; b <= RTD_NETTRACE_PROFILE_WAIT; b <<= 1)
		if (c->dotnet_kinds & b) {
			fprintf(f, "%s%s", any ? "," : "",
				rtd_nettrace_profile_kind_name(b));
			any = true;
		}
	fprintf(f, "%s\ndotnet-counters: ", any ? "" : "none");
	yq(f, c->dotnet_counters ? c->dotnet_counters : "none");
	fputc('\n', f);
	ydur(f, "counters-interval", c->counters_interval_ns);
	fprintf(f, "dotnet-read-buffer: %lluk\n",
		(unsigned long long)(c->dotnet_read_buffer / 1024));
	fprintf(f, "max-targets: %u\n", c->max_targets);
	fprintf(f, "max-memory: %lluk\n",
		(unsigned long long)(c->max_memory / 1024));
	fprintf(f, "max-cpu: %g%%\n", c->max_cpu);
	ydur(f, "max-pull-seconds", c->max_pull_ns);
	fprintf(f, "log-level: %s\n",
		choice_word(options[O_LOG_LEVEL].meta, c->log_level, w,
			    sizeof(w)));
	return ferror(f) ? -EIO : 0;
}

/* ---- copy ------------------------------------------------------------------------ */

static int dup_str(char **dst, const char *s)
{
	*dst = NULL;
	return s && !(*dst = strdup(s)) ? -1 : 0;
}

rtd_agent_config *agent_config_dup(const rtd_agent_config *c)
{
	rtd_agent_config *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *c;
	d->specs = NULL;
	d->nspecs = 0;
	d->push_headers = NULL;
	d->npush_headers = 0;
	d->labels = NULL;
	d->nlabels = 0;
	int bad = dup_str(&d->listen, c->listen) |
		  dup_str(&d->tls_cert, c->tls_cert) |
		  dup_str(&d->tls_key, c->tls_key) |
		  dup_str(&d->tls_client_ca, c->tls_client_ca) |
		  dup_str(&d->auth_token_file, c->auth_token_file) |
		  dup_str(&d->pprof_prefix, c->pprof_prefix) |
		  dup_str(&d->push, c->push) |
		  dup_str(&d->push_tenant, c->push_tenant) |
		  dup_str(&d->otlp, c->otlp) |
		  dup_str(&d->dotnet_counters, c->dotnet_counters) |
		  dup_str(&d->proc_dir, c->proc_dir);
	if (bad)
		goto fail;
	for (size_t i = 0; i < c->nspecs; i++) {
		const struct agent_spec *s = &c->specs[i];
		struct agent_spec sp;
		char err[256];
		char pid[16];
		snprintf(pid, sizeof(pid), "%d", (int)s->pid);
		if (spec_init(&sp, s->kind, s->kind == SPEC_PID ? pid : s->arg,
			      s->service, err, sizeof(err)))
			goto fail;
		if (s->flight && !(sp.flight = agent_flight_dup(s->flight))) {
			spec_clear(&sp);
			goto fail;
		}
		if (add_spec(d, &sp))
			goto fail;
	}
	for (size_t i = 0; i < c->npush_headers; i++)
		if (add_header(d, c->push_headers[i]))
			goto fail;
	for (size_t i = 0; i < c->nlabels; i++)
		if (add_label(d, c->labels[i].key, strlen(c->labels[i].key),
			      c->labels[i].val))
			goto fail;
	return d;
fail:
	rtd_agent_config_free(d);
	return NULL;
}
