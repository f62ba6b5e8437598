/* SPDX-License-Identifier: MIT */
/*
 * ipc_providers.c - dotnet-trace's provider syntax and its well-known
 * profiles.
 *
 *   --providers Name[:Keywords[:Level[:Args]]][,Name...]
 *
 * As dotnet-trace's Extensions.ToProvider: Keywords hexadecimal, "0x"
 * optional, empty or absent meaning all (~0). Level a number or Critical(1) Error(2) Warning(3) Informational(4)
 * Verbose(5) LogAlways(0); empty or absent meaning Verbose; above 5 is
 * refused (dotnet-trace takes it as 5). Args must be key=value pairs.
 * Args: "key=value;key=value"; a double-quoted Args may hold ':' and ','.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/errmsg.h"
#include "common/textrd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/ipc_session.h"

/* Keywords of Microsoft-Windows-DotNETRuntime (ClrTraceEventParser). */
#define KW_GC 0x1ull
#define KW_GCHANDLE 0x2ull
#define KW_EXCEPTION 0x8000ull
#define KW_CLR_DEFAULT 0x14C14FCCBDull /* ClrTraceEventParser Default */
#define KW_TASKS_FLOW_IDS 0x80ull
#define KW_DS_MESSAGES 0x1ull
#define KW_DS_EVENTS 0x2ull
#define PROVIDER_SAMPLES "Microsoft-DotNETCore-SampleProfiler"
#define PROVIDER_RUNTIME "Microsoft-Windows-DotNETRuntime"

static void perr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void perr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(err, len, 0, fmt, ap);
	va_end(ap);
}

static int add(struct rtd_ipc_providers *out, const char *name, size_t nlen,
	       uint64_t kw, uint32_t level, const char *args, size_t alen)
{
	char *n = strndup(name, nlen);
	char *a = args ? strndup(args, alen) : NULL;
	if (!n || (args && !a)) {
		free(n);
		free(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->n; i++) {
		if (strcmp(out->v[i].name, n) == 0) {
			free((char *)out->v[i].name);
			free((char *)out->v[i].args);
			free((void *)out->v[i].filter_ids);
			out->v[i].filter_ids = NULL;
			out->v[i].n_filter_ids = 0;
			out->v[i].filter_enable = false;
			out->v[i].name = n;
			out->v[i].keywords = kw;
			out->v[i].level = level;
			out->v[i].args = a;
			return 0;
		}
	}
	void *nv = realloc(out->v, (out->n + 1) * sizeof(*out->v));
	if (!nv) {
		free(n);
		free(a);
		return -ENOMEM;
	}
	out->v = nv;
	memset(&out->v[out->n], 0, sizeof(out->v[0]));
	out->v[out->n].name = n;
	out->v[out->n].keywords = kw;
	out->v[out->n].level = level;
	out->v[out->n].args = a;
	out->n++;
	return 0;
}

/* A level: 0-5 or a name; NULL, or why not, into why. */
static int parse_level(const char *s, size_t n, uint32_t *out,
		       const char **why)
{
	static const struct {
		const char *name;
		uint32_t v;
	} names[] = {{"logalways", 0}, {"critical", 1}, {"error", 2},
		     {"warning", 3}, {"informational", 4}, {"verbose", 5}};
	*why = "is not a number or a level name (LogAlways 0, Critical 1, "
	       "Error 2, Warning 3, Informational 4, Verbose 5)";
	if (n == 0) {
		*out = 5;
		return 0;
	}
	size_t digits = 0;
	while (digits < n && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (digits == n) {
		unsigned long v = 0;
		for (size_t i = 0; i < n && v <= 5; i++)
			v = v * 10 + (unsigned long)(s[i] - '0');
		if (v > 5) {
			/* dotnet-trace takes it as Verbose; the runtime would
			 * refuse it: say so rather than guess */
			*why = "is above Verbose (5), the highest level";
			return -1;
		}
		*out = (uint32_t)v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n &&
		    strncasecmp(names[i].name, s, n) == 0) {
			*out = names[i].v;
			return 0;
		}
	return -1;
}

/*
 * Arguments are "key=value" pairs separated by ';' (a value may be
 * double-quoted to hold ';' or '='). Returns 0, or the offset + 1 of the
 * first pair without '='; *plen receives that pair's length.
 */
static size_t check_args(const char *a, size_t n, size_t *plen)
{
	size_t i = 0;
	while (i < n) {
		size_t start = i;
		bool quoted = false, eq = false;
		for (; i < n; i++) {
			if (a[i] == '"')
				quoted = !quoted;
			else if (!quoted && a[i] == ';')
				break;
			else if (!quoted && a[i] == '=')
				eq = true;
		}
		if (i > start && !eq) {
			*plen = i - start;
			return start + 1;
		}
		i++; /* past ';' */
	}
	return 0;
}

/* Keywords: hex, "0x" allowed, up to 16 digits; none at all is 0. */
static int parse_keywords(const char *s, size_t n, uint64_t *out)
{
	*out = 0;
	size_t i = 0;
	return n == 0 || (hex_field(s, n, &i, out) && i == n) ? 0 : -1;
}

RTD_API int rtd_ipc_providers_parse(const char *spec,
				    struct rtd_ipc_providers *out, char *err,
				    size_t errlen)
{
	if (!spec || !out)
		return -RTD_E_INVAL;
	const char *p = spec;
	while (*p) {
		const char *start = p;
		/* one provider: up to an unquoted ',' */
		const char *field[4] = {0};
		size_t flen[4] = {0};
		int nf = 0;
		field[0] = p;
		bool quoted = false;
		for (;; p++) {
			if (*p == '"' && nf == 3) {
				quoted = !quoted;
				continue;
			}
			if (!quoted && (*p == ':' && nf < 3)) {
				flen[nf] = (size_t)(p - field[nf]);
				field[++nf] = p + 1;
				continue;
			}
			if ((!quoted && *p == ',') || !*p) {
				flen[nf] = (size_t)(p - field[nf]);
				break;
			}
		}
		if (quoted) {
			perr(err, errlen, "provider '%s': unterminated quote "
					  "in its arguments", start);
			return -RTD_E_IPC_PROVIDER;
		}
		/* trim the name */
		while (flen[0] && isspace((unsigned char)*field[0])) {
			field[0]++;
			flen[0]--;
		}
		while (flen[0] && isspace((unsigned char)field[0][flen[0] - 1]))
			flen[0]--;
		if (!flen[0]) {
			perr(err, errlen, "empty provider name at offset %zu "
					  "of '%s'",
			     (size_t)(start - spec), spec);
			return -RTD_E_IPC_PROVIDER;
		}
		uint64_t kw = ~0ull; /* empty or absent: all */
		uint32_t level = 5;
		if (nf >= 1 && flen[1] &&
		    parse_keywords(field[1], flen[1], &kw) != 0) {
			perr(err, errlen, "provider '%.*s': keywords '%.*s' "
					  "are not a hexadecimal mask",
			     (int)flen[0], field[0], (int)flen[1], field[1]);
			return -RTD_E_IPC_PROVIDER;
		}
		const char *why;
		if (nf >= 2 &&
		    parse_level(field[2], flen[2], &level, &why) != 0) {
			perr(err, errlen, "provider '%.*s': level '%.*s' %s",
			     (int)flen[0], field[0], (int)flen[2], field[2],
			     why);
			return -RTD_E_IPC_PROVIDER;
		}
		const char *a = NULL;
		size_t al = 0;
		if (nf >= 3) {
			a = field[3];
			al = flen[3];
			if (al >= 2 && a[0] == '"' && a[al - 1] == '"') {
				a++;
				al -= 2;
			}
			size_t bl = 0, bad = check_args(a, al, &bl);
			if (bad) {
				perr(err, errlen, "provider '%.*s': argument "
						  "'%.*s' is not KEY=VALUE "
						  "(arguments are "
						  "key=value;key=value)",
				     (int)flen[0], field[0], (int)bl,
				     a + bad - 1);
				return -RTD_E_IPC_PROVIDER;
			}
		}
		int rc = add(out, field[0], flen[0], kw, level, a, al);
		if (rc)
			return rc;
		if (*p == ',')
			p++;
	}
	if (!out->n) {
		perr(err, errlen, "no provider given");
		return -RTD_E_IPC_PROVIDER;
	}
	return 0;
}

static const char *const profile_names[] = {
	"dotnet-common", "dotnet-sampled-thread-time", "cpu-sampling",
	"gc-verbose", "gc-collect", "database", NULL};

RTD_API const char *const *rtd_ipc_profile_names(void)
{
	return profile_names;
}

/* dotnet-trace's profiles (ListProfilesCommandHandler). */
RTD_API int rtd_ipc_providers_add_profile(const char *name,
					  struct rtd_ipc_providers *out)
{
#define ADD(n, kw, lvl, args)                                                  \
	do {                                                                   \
		const char *a_ = (args);                                       \
		int rc_ = add(out, n, strlen(n), kw, lvl, a_,                  \
			      a_ ? strlen(a_) : 0);                            \
		if (rc_)                                                       \
			return rc_;                                            \
	} while (0)
	if (!name)
		return -RTD_E_INVAL;
	if (strcasecmp(name, "dotnet-common") == 0) {
		/* GC, AssemblyLoader, Loader, JIT, Exceptions, Threading,
		 * JittedMethodILToNativeMap, Compilation (dotnet-trace 10) */
		ADD("Microsoft-Windows-DotNETRuntime", 0x100003801Dull, 4, NULL);
	} else if (strcasecmp(name, "dotnet-sampled-thread-time") == 0) {
		ADD("Microsoft-DotNETCore-SampleProfiler", 0xF00000000000ull, 4,
		    NULL);
	} else if (strcmp(name, "cpu-sampling") == 0) {
		ADD("Microsoft-DotNETCore-SampleProfiler", 0xF00000000000ull, 4,
		    NULL);
		ADD("Microsoft-Windows-DotNETRuntime", KW_CLR_DEFAULT, 4, NULL);
	} else if (strcmp(name, "gc-verbose") == 0) {
		ADD("Microsoft-Windows-DotNETRuntime",
		    KW_GC | KW_GCHANDLE | KW_EXCEPTION, 5, NULL);
	} else if (strcmp(name, "gc-collect") == 0) {
		ADD("Microsoft-Windows-DotNETRuntime", KW_GC, 4, NULL);
		ADD("Microsoft-Windows-DotNETRuntimePrivate", KW_GC, 4, NULL);
	} else if (strcmp(name, "database") == 0) {
		ADD("System.Threading.Tasks.TplEventSource", KW_TASKS_FLOW_IDS,
		    4, NULL);
		ADD("Microsoft-Diagnostics-DiagnosticSource",
		    KW_DS_MESSAGES | KW_DS_EVENTS, 5,
		    "FilterAndPayloadSpecs="
		    "SqlClientDiagnosticListener/"
		    "System.Data.SqlClient.WriteCommandBefore@Activity1Start:"
		    "-Command;Command.CommandText;ConnectionId;Operation;"
		    "Command.Connection.ServerVersion;Command.CommandTimeout;"
		    "Command.CommandType;Command.Connection.ConnectionString;"
		    "Command.Connection.Database;Command.Connection.DataSource;"
		    "Command.Connection.PacketSize\r\n"
		    "SqlClientDiagnosticListener/"
		    "System.Data.SqlClient.WriteCommandAfter@Activity1Stop:\r\n"
		    "Microsoft.EntityFrameworkCore/"
		    "Microsoft.EntityFrameworkCore.Database.Command."
		    "CommandExecuting@Activity2Start:-Command.CommandText;"
		    "Command;ConnectionId;IsAsync;"
		    "Command.Connection.ClientConnectionId;"
		    "Command.Connection.ServerVersion;Command.CommandTimeout;"
		    "Command.CommandType;Command.Connection.ConnectionString;"
		    "Command.Connection.Database;Command.Connection.DataSource;"
		    "Command.Connection.PacketSize\r\n"
		    "Microsoft.EntityFrameworkCore/"
		    "Microsoft.EntityFrameworkCore.Database.Command."
		    "CommandExecuted@Activity2Stop:");
	} else {
		return -RTD_E_NOTFOUND;
	}
	return 0;
#undef ADD
}

/* Keywords and events of Microsoft-Windows-DotNETRuntime a profile reads
 * (ClrEtwAll.man). */
#define KW_LOADER 0x8ull
#define KW_JIT 0x10ull
#define KW_CONTENTION 0x4000ull
#define EV_GC_START 1u
#define EV_ALLOCATION_TICK 10u
#define EV_EXCEPTION_THROWN 80u
#define EV_CONTENTION_START 81u
#define EV_CONTENTION_LOCK_CREATED 90u
#define EV_CONTENTION_STOP 91u
#define EV_METHOD_LOAD_VERBOSE 143u
#define EV_DOMAIN_MODULE_LOAD 151u
#define EV_MODULE_LOAD 152u
#define EV_R2R_GET_ENTRY_POINT 159u
#define EV_GC_JOIN 203u
#define KW_WAITHANDLE 0x40000000000ull
#define EV_WAIT_HANDLE_WAIT_START 301u
#define EV_WAIT_HANDLE_WAIT_STOP 302u
#define KW_COMPILATION_DIAGNOSTIC 0x2000000000ull

RTD_API int rtd_ipc_profile_request(unsigned kinds,
				    struct rtd_ipc_providers *out,
				    struct rtd_ipc_session_opts *so)
{
	const unsigned known = RTD_IPC_PROFILE_CPU | RTD_IPC_PROFILE_ALLOC |
			       RTD_IPC_PROFILE_LOCK | RTD_IPC_PROFILE_EXCEPTION |
			       RTD_IPC_PROFILE_WAIT;
	if (!out || !so || !kinds || (kinds & ~known))
		return -RTD_E_INVAL;
	/* one filter for the one runtime provider: the ids of every kind */
	uint32_t v[16], nf = 0;
	uint64_t kw = KW_JIT | KW_LOADER | KW_COMPILATION_DIAGNOSTIC;
	v[nf++] = EV_METHOD_LOAD_VERBOSE;
	v[nf++] = EV_DOMAIN_MODULE_LOAD;
	v[nf++] = EV_MODULE_LOAD;
	v[nf++] = EV_R2R_GET_ENTRY_POINT;
	if (kinds & RTD_IPC_PROFILE_ALLOC) {
		kw |= KW_GC;
		v[nf++] = EV_ALLOCATION_TICK;
		/*
		 * On Linux the GC does not learn its event state from the
		 * provider's keywords and level: at every GC it asks whether
		 * two events are enabled, GCStart (GC keyword at
		 * Informational) and GCJoin_V2 (GC keyword at Verbose), and
		 * fires AllocationTick only while both are
		 * (GCToEEInterface::UpdateGCEventStatus). Filtered out, they
		 * turn AllocationTick off at the first GC of the session:
		 * the profile had only the ticks before it. So they pass.
		 */
		v[nf++] = EV_GC_START;
		v[nf++] = EV_GC_JOIN;
	}
	if (kinds & RTD_IPC_PROFILE_LOCK) {
		kw |= KW_CONTENTION;
		v[nf++] = EV_CONTENTION_START;
		v[nf++] = EV_CONTENTION_STOP;
		v[nf++] = EV_CONTENTION_LOCK_CREATED;
	}
	if (kinds & RTD_IPC_PROFILE_EXCEPTION) {
		kw |= KW_EXCEPTION;
		v[nf++] = EV_EXCEPTION_THROWN;
	}
	if (kinds & RTD_IPC_PROFILE_WAIT) {
		/* Verbose events: the provider is enabled at 5 below */
		kw |= KW_WAITHANDLE;
		v[nf++] = EV_WAIT_HANDLE_WAIT_START;
		v[nf++] = EV_WAIT_HANDLE_WAIT_STOP;
	}
	int rc = 0;
	if (kinds & RTD_IPC_PROFILE_CPU)
		rc = add(out, PROVIDER_SAMPLES, strlen(PROVIDER_SAMPLES),
			 0xF00000000000ull, 4, NULL, 0);
	if (!rc)
		rc = add(out, PROVIDER_RUNTIME, strlen(PROVIDER_RUNTIME), kw, 5,
			 NULL, 0);
	if (rc)
		return rc;
	uint32_t *f = malloc(nf * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(f, v, nf * sizeof(*f));
	for (size_t i = 0; i < out->n; i++) {
		struct rtd_ipc_provider *p = &out->v[i];
		if (strcmp(p->name, PROVIDER_RUNTIME) != 0)
			continue;
		p->filter_ids = f;
		p->n_filter_ids = nf;
		p->filter_enable = true;
	}
	so->no_stackwalk = kinds == RTD_IPC_PROFILE_CPU;
	so->rundown_keyword = RTD_IPC_RUNDOWN_NAMES;
	so->filters_optional = true;
	return 0;
}

RTD_API bool rtd_ipc_profile_supported(unsigned kind, const char *clr_version,
				       char *why, size_t whylen)
{
	if (kind != RTD_IPC_PROFILE_WAIT || !clr_version || !*clr_version)
		return true;
	/* "MAJOR.MINOR.PATCH[-pre][+commit]" */
	char *end;
	unsigned long major = strtoul(clr_version, &end, 10);
	if (end == clr_version || *end != '.' || major >= 9)
		return true;
	if (why && whylen) {
		size_t n = strcspn(clr_version, "+");
		snprintf(why, whylen,
			 "the .NET %.*s runtime sends no wait events "
			 "(WaitHandleWait/Start and Stop came with .NET 9)",
			 (int)(n > 40 ? 40 : n), clr_version);
	}
	return false;
}

/* The runtime's keywords by name (ClrEtwAll.man), as dotnet-trace's
 * --clrevents names them. */
static const struct {
	const char *name;
	uint64_t kw;
} clr_keywords[] = {
	{"gc", 0x1},
	{"gchandle", 0x2},
	{"fusion", 0x4},
	{"assemblyloader", 0x4},
	{"loader", 0x8},
	{"jit", 0x10},
	{"ngen", 0x20},
	{"startenumeration", 0x40},
	{"endenumeration", 0x80},
	{"security", 0x400},
	{"appdomainresourcemanagement", 0x800},
	{"jittracing", 0x1000},
	{"interop", 0x2000},
	{"contention", 0x4000},
	{"exception", 0x8000},
	{"threading", 0x10000},
	{"jittedmethodiltonativemap", 0x20000},
	{"overrideandsuppressngenevents", 0x40000},
	{"type", 0x80000},
	{"gcheapdump", 0x100000},
	{"gcsampledobjectallocationhigh", 0x200000},
	{"gcheapsurvivalandmovement", 0x400000},
	{"gcheapcollect", 0x800000},
	{"managedheadcollect", 0x800000},
	{"gcheapandtypenames", 0x1000000},
	{"gcsampledobjectallocationlow", 0x2000000},
	{"perftrack", 0x20000000},
	{"stack", 0x40000000},
	{"threadtransfer", 0x80000000},
	{"debugger", 0x100000000},
	{"monitoring", 0x200000000},
	{"codesymbols", 0x400000000},
	{"eventsource", 0x800000000},
	{"compilation", 0x1000000000},
	{"compilationdiagnostic", 0x2000000000},
	{"methoddiagnostic", 0x4000000000},
	{"typediagnostic", 0x8000000000},
	{"jitinstrumentationdata", 0x10000000000},
	{"profiler", 0x20000000000},
	{"waithandle", 0x40000000000},
	{"allocationsampling", 0x80000000000},
};

RTD_API int rtd_ipc_clrevents_parse(const char *list, uint64_t *keywords,
				    char *bad, size_t badlen)
{
	if (!list || !keywords)
		return -RTD_E_INVAL;
	uint64_t kw = 0;
	const char *p = list;
	for (;;) {
		size_t n = strcspn(p, "+");
		size_t i = 0, nk = sizeof(clr_keywords) / sizeof(clr_keywords[0]);
		for (; i < nk; i++)
			if (strlen(clr_keywords[i].name) == n &&
			    strncasecmp(clr_keywords[i].name, p, n) == 0)
				break;
		if (i == nk) {
			perr(bad, badlen, "%.*s", (int)n, p);
			return -RTD_E_IPC_PROVIDER;
		}
		kw |= clr_keywords[i].kw;
		if (!p[n])
			break;
		p += n + 1;
	}
	*keywords = kw;
	return 0;
}

RTD_API void rtd_ipc_providers_clear(struct rtd_ipc_providers *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free((char *)p->v[i].name);
		free((char *)p->v[i].args);
		free((void *)p->v[i].filter_ids);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}
