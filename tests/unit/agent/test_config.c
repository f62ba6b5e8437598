/* SPDX-License-Identifier: MIT */
/*
 * The agent's options: one table, values from flags and from YAML files
 * (libyaml), messages that name the option and the file's line and column,
 * the checks across options, and the effective config written back and
 * read again to the same config.
 */
#include "test_util.h"

#include <errno.h>

#include "agent/config.h"
#include "rtdiag/agent.h"
#include "rtdiag/flight_recorder.h"

static rtd_agent_config *cfg(void)
{
	rtd_agent_config *c = rtd_agent_config_new();
	assert_non_null(c);
	return c;
}

static char *dump(const rtd_agent_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rtd_agent_config_write(c, f), 0);
	fclose(f);
	return buf;
}

static void contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not in '%s'", needle, hay);
}

static void option_table(void **state)
{
	(void)state;
	size_t n;
	const struct rtd_agent_option *o = rtd_agent_options(&n);
	assert_true(n >= 15);
	rtd_agent_config *c = cfg();
	for (size_t i = 0; i < n; i++) {
		/* every option has a name, help, and is known to the setter;
		 * its default (when it has one) is a valid value */
		assert_non_null(o[i].name);
		assert_non_null(o[i].help);
		if (o[i].def)
			assert_int_equal(rtd_agent_config_set(c, o[i].name,
							      o[i].def), 0);
		/* '_' spelling works too, as YAML keys often have it */
		char alt[64];
		snprintf(alt, sizeof(alt), "%s", o[i].name);
		for (char *p = alt; *p; p++)
			if (*p == '-')
				*p = '_';
		if (o[i].def)
			assert_int_equal(rtd_agent_config_set(c, alt, o[i].def),
					 0);
	}
	assert_int_equal(rtd_agent_config_set(c, "lissen", "x"),
			 -RTD_E_NOTFOUND);
	contains(rtd_agent_config_errmsg(c), "no option 'lissen'");
	rtd_agent_config_free(c);
	rtd_agent_config_free(NULL);
}

static void defaults_and_check(void **state)
{
	(void)state;
	rtd_agent_config *c = cfg();
	assert_int_equal(c->window_ns, 15000000000ull);
	assert_int_equal(c->scan_ns, 2000000000ull);
	assert_string_equal(c->listen, "127.0.0.1:4040");
	assert_string_equal(c->pprof_prefix, "/targets/{service}");
	assert_int_equal(c->push_queue, 64);
	assert_int_equal(c->max_memory, 256ull << 20);
	assert_true(c->max_cpu == 5.0);
	assert_int_equal(rtd_agent_config_log_level(c), RTD_LOG_INFO);
	assert_int_equal(c->cpu_hz, 99);
	assert_int_equal(c->dotnet_cpu, DOTNET_CPU_AUTO);
	/* cpu, alloc, lock, exception, wait */
	assert_int_equal(c->dotnet_kinds, 0x1f);
	assert_string_equal(c->dotnet_counters, "System.Runtime");
	assert_int_equal(c->counters_interval_ns, 5000000000ull);
	/* no target yet */
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "no target");
	assert_int_equal(rtd_agent_config_set(c, "target", "dotnet"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);

	/* loopback only, unless meant */
	assert_int_equal(rtd_agent_config_set(c, "listen", "0.0.0.0:4040"), 0);
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "not a loopback address");
	contains(rtd_agent_config_errmsg(c), "--allow-remote");
	assert_int_equal(rtd_agent_config_set(c, "allow-remote", NULL), 0);
	/* remote needs TLS or a token, or --insecure said in so many words */
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "without TLS or a token");
	contains(rtd_agent_config_errmsg(c), "--insecure");
	assert_int_equal(rtd_agent_config_set(c, "auth-token-file", "/t"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	assert_int_equal(rtd_agent_config_set(c, "tls-cert", "/c.pem"), 0);
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "tls-cert and tls-key go together");
	assert_int_equal(rtd_agent_config_set(c, "tls-key", "/k.pem"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	rtd_agent_config_free(c);
	assert_non_null(c = rtd_agent_config_new());
	assert_int_equal(rtd_agent_config_set(c, "target", "dotnet"), 0);
	assert_int_equal(rtd_agent_config_set(c, "tls-client-ca", "/ca"), 0);
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "tls-client-ca needs tls-cert");
	assert_int_equal(rtd_agent_config_set(c, "tls-client-ca", ""), 0);
	assert_int_equal(rtd_agent_config_set(c, "listen", "0.0.0.0:4040"), 0);
	assert_int_equal(rtd_agent_config_set(c, "allow-remote", NULL), 0);
	assert_int_equal(rtd_agent_config_set(c, "insecure", NULL), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	assert_int_equal(rtd_agent_config_set(c, "allow-remote", "false"), 0);
	assert_int_equal(rtd_agent_config_set(c, "listen", "[::1]:0"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	assert_int_equal(rtd_agent_config_set(c, "listen", "localhost:9"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	static const char *const bad_listen[] = {"4040", "::1:4040", ":4040",
						 "127.0.0.1:70000",
						 "127.0.0.1:x"};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(rtd_agent_config_set(c, "listen",
						      bad_listen[i]), 0);
		assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
		contains(rtd_agent_config_errmsg(c), "want ADDR:PORT");
	}
	assert_int_equal(rtd_agent_config_set(c, "listen", "127.0.0.1:1"), 0);
	assert_int_equal(rtd_agent_config_set(c, "push", "ftp://x"), 0);
	assert_int_equal(rtd_agent_config_check(c), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "http:// or https://");
	assert_int_equal(rtd_agent_config_set(c, "push", "http://x:4040"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	rtd_agent_config_free(c);
}

static void values(void **state)
{
	(void)state;
	uint64_t ns, b;
	double pct;
	assert_int_equal(agent_parse_duration("15s", &ns), 0);
	assert_int_equal(ns, 15000000000ull);
	assert_int_equal(agent_parse_duration("1.5", &ns), 0);
	assert_int_equal(ns, 1500000000ull);
	assert_int_equal(agent_parse_duration("200ms", &ns), 0);
	assert_int_equal(ns, 200000000ull);
	assert_int_equal(agent_parse_duration("2m", &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(agent_parse_duration("1h", &ns), 0);
	assert_int_equal(agent_parse_duration("10us", &ns), 0);
	assert_int_equal(ns, 10000);
	assert_int_equal(agent_parse_duration("-1s", &ns), -1);
	assert_int_equal(agent_parse_duration("1x", &ns), -1);
	assert_int_equal(agent_parse_duration("", &ns), -1);
	assert_int_equal(agent_parse_size("64k", &b), 0);
	assert_int_equal(b, 65536);
	assert_int_equal(agent_parse_size("1.5M", &b), 0);
	assert_int_equal(b, 1572864);
	assert_int_equal(agent_parse_size("2GiB", &b), 0);
	assert_int_equal(b, 2ull << 30);
	assert_int_equal(agent_parse_size("7", &b), 0);
	assert_int_equal(b, 7);
	assert_int_equal(agent_parse_size("7q", &b), -1);
	assert_int_equal(agent_parse_percent("5%", &pct), 0);
	assert_true(pct == 5);
	assert_int_equal(agent_parse_percent("0.5", &pct), 0);
	assert_true(pct == 0.5);
	assert_int_equal(agent_parse_percent("5%%", &pct), -1);

	rtd_agent_config *c = cfg();
	static const struct {
		const char *name, *value, *msg;
	} bad[] = {
		{"window", "500ms", "window: 500ms is outside 1s..1h"},
		{"window", "soon", "not a duration"},
		{"max-memory", "512k", "max-memory: 512k is under 1M"},
		{"max-memory", "lots", "not a size"},
		{"max-cpu", "0", "outside 0.1%..800%"},
		{"max-cpu", "half", "not a percentage"},
		{"push-queue", "0", "outside 1..100000"},
		{"push-queue", "-3", "not a whole number"},
		{"max-targets", "5000", "outside 1..1024"},
		{"allow-remote", "maybe", "not true or false"},
		{"log-level", "loud", "not one of error|warn|info|debug"},
		{"pprof-prefix", "x", "starting with '/'"},
		{"pprof-prefix", "/a?b", "without '?'"},
		{"label", "novalue", "want KEY=VALUE"},
		{"label", "1x=y", "does not start with a digit"},
		{"push-header", "NoColon", "want NAME: VALUE"},
		{"target", "pid=0", "not a process id"},
		{"window", NULL, "needs a value"},
		{"dotnet-profiles", "cpu,heap", "'heap' is not one of cpu, alloc"},
		{"dotnet-cpu", "ebpf", "not one of auto|eventpipe|perf"},
		{"cpu-hz", "0", "outside 1..10000"},
		{"counters-interval", "100ms", "outside 1s..1h"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = rtd_agent_config_set(c, bad[i].name, bad[i].value);
		if (rc != -RTD_E_INVAL)
			fail_msg("%s=%s: %d", bad[i].name, bad[i].value, rc);
		contains(rtd_agent_config_errmsg(c), bad[i].msg);
	}
	assert_int_equal(rtd_agent_config_set(c, "dotnet-profiles", "lock,cpu"), 0);
	assert_int_equal(c->dotnet_kinds, 0x5);
	assert_int_equal(rtd_agent_config_set(c, "dotnet-profiles", "wait,lock"), 0);
	assert_int_equal(c->dotnet_kinds, 0x14); /* RTD_NETTRACE_PROFILE_WAIT */
	assert_int_equal(rtd_agent_config_set(c, "dotnet-profiles", "none"), 0);
	assert_int_equal(c->dotnet_kinds, 0);
	assert_int_equal(rtd_agent_config_set(c, "dotnet-counters", "none"), 0);
	assert_null(c->dotnet_counters);
	assert_int_equal(rtd_agent_config_set(c, "dotnet-counters",
					      "System.Runtime[cpu-usage]"), 0);
	assert_string_equal(c->dotnet_counters, "System.Runtime[cpu-usage]");
	assert_int_equal(rtd_agent_config_set(c, "dotnet-cpu", "perf"), 0);
	assert_int_equal(c->dotnet_cpu, DOTNET_CPU_PERF);
	assert_int_equal(rtd_agent_config_set(c, "window", "30s"), 0);
	assert_int_equal(c->window_ns, 30000000000ull);
	/* the CLI's grammar (rtd_parse_duration/size): "8m" is 8 MiB and
	 * hh:mm:ss a duration here too; a refusal quotes the junk */
	assert_int_equal(rtd_agent_config_set(c, "window", "00:01:30"), 0);
	assert_int_equal(c->window_ns, 90000000000ull);
	assert_int_equal(rtd_agent_config_set(c, "window", "1min"), 0);
	assert_int_equal(c->window_ns, 60000000000ull);
	assert_int_equal(rtd_agent_config_set(c, "max-memory", "8m"), 0);
	assert_int_equal(c->max_memory, 8ull << 20);
	assert_int_equal(rtd_agent_config_set(c, "max-memory", "1e9"), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "unknown unit 'e9'");
	assert_int_equal(rtd_agent_config_set(c, "window", "15sx"), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "unknown unit 'sx'");
	assert_int_equal(rtd_agent_config_set(c, "pprof-prefix", "/p/{pid}/"), 0);
	assert_string_equal(c->pprof_prefix, "/p/{pid}");
	assert_int_equal(rtd_agent_config_set(c, "pprof-prefix", "/"), 0);
	assert_string_equal(c->pprof_prefix, "");
	assert_int_equal(rtd_agent_config_set(c, "log-level", "debug"), 0);
	assert_int_equal(rtd_agent_config_log_level(c), RTD_LOG_DEBUG);
	/* a label set again replaces its value */
	assert_int_equal(rtd_agent_config_set(c, "label", "env=dev"), 0);
	assert_int_equal(rtd_agent_config_set(c, "label", "env=prod"), 0);
	assert_int_equal(c->nlabels, 1);
	assert_string_equal(c->labels[0].val, "prod");
	rtd_agent_config_free(c);
}

static void specs(void **state)
{
	(void)state;
	char err[256];
	struct agent_spec sp;
	assert_int_equal(spec_parse("pid=4242", &sp, err, sizeof(err)), 0);
	assert_int_equal(sp.kind, SPEC_PID);
	assert_int_equal(sp.pid, 4242);
	assert_null(sp.service);
	spec_clear(&sp);
	/* a regex with commas of its own, and a service */
	assert_int_equal(spec_parse("name=^a{1,3}x$,service=api", &sp, err,
				    sizeof(err)), 0);
	assert_int_equal(sp.kind, SPEC_NAME);
	assert_string_equal(sp.arg, "^a{1,3}x$");
	assert_string_equal(sp.service, "api");
	assert_int_equal(regexec(&sp.re, "aax", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&sp.re, "aaaax", 0, NULL, 0), 0);
	spec_clear(&sp);
	assert_int_equal(spec_parse("cgroup=/system.slice/x.service/", &sp, err,
				    sizeof(err)), 0);
	assert_string_equal(sp.arg, "/system.slice/x.service");
	spec_clear(&sp);
	assert_int_equal(spec_parse("dotnet,service=shop", &sp, err,
				    sizeof(err)), 0);
	assert_int_equal(sp.kind, SPEC_DOTNET);
	assert_string_equal(sp.service, "shop");
	char t[64];
	assert_string_equal(spec_text(&sp, t, sizeof(t)), "dotnet");
	spec_clear(&sp);

	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{"pid=abc", "not a process id"},
		{"pid=", "not a process id"},
		{"name=", "give a regular expression"},
		{"name=(", "name=(:"},
		{"cgroup=relative", "from '/'"},
		{"dotnet=1", "'dotnet' takes no value"},
		{"comm=x", "want pid=PID, name=REGEX"},
		{"name=x,service=bad name", "service name 'bad name'"},
		/* glibc would build gigabytes for these */
		{"name=a++", "a repetition of a repetition"},
		{"name=a{2,2}+", "a repetition of a repetition"},
		{"name=(a*)*", "a repeated group holding a repetition"},
		{"name=((a|b)+x)+", "a repeated group holding a repetition"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(spec_parse(bad[i].spec, &sp, err, sizeof(err)),
				 -RTD_E_INVAL);
		contains(err, bad[i].msg);
	}
	/* what people write is fine */
	static const char *const good[] = {"name=^(api|web)-[0-9]+$",
					   "name=a\\++", "name=[+*]+x",
					   "name=(ab)+", "name=^dotnet-.*"};
	for (size_t i = 0; i < 5; i++) {
		if (spec_parse(good[i], &sp, err, sizeof(err)))
			fail_msg("%s: %s", good[i], err);
		spec_clear(&sp);
	}
	assert_true(service_name_ok("api-v2.eu_1"));
	assert_false(service_name_ok("a/b"));
	assert_false(service_name_ok(""));
	assert_true(label_name_ok("_env1"));
	assert_false(label_name_ok("env-x"));
}

static const char yaml_good[] =
	"# a full config\n"
	"listen: 127.0.0.1:0\n"
	"window: 10s\n"
	"scan_interval: 500ms\n"
	"target:\n"
	"  - dotnet\n"
	"  - pid=1\n"
	"  - {name: \"^api$\", service: checkout}\n"
	"  - cgroup: /kubepods.slice\n"
	"push: http://127.0.0.1:4040/\n"
	"push-queue: 8\n"
	"push-header:\n"
	"  Authorization: Bearer abc\n"
	"push-tenant: team-a\n"
	"label:\n"
	"  env: prod\n"
	"  region: \"eu-1\"\n"
	"max-memory: 128M\n"
	"max-cpu: 2%\n"
	"dotnet-profiles: cpu,exception\n"
	"dotnet-counters: none\n"
	"dotnet-cpu: perf\n"
	"cpu-hz: 49\n"
	"log-level: warn\n";

/* Written back, c reads to the same config, and so does the library's
 * own copy; frees c. */
static void roundtrip(rtd_agent_config *c)
{
	char *d1 = dump(c);
	rtd_agent_config *c2 = cfg();
	assert_int_equal(rtd_agent_config_load_text(c2, d1, strlen(d1), "d1"),
			 0);
	char *d2 = dump(c2);
	assert_string_equal(d1, d2);
	rtd_agent_config *c3 = agent_config_dup(c2);
	assert_non_null(c3);
	char *d3 = dump(c3);
	assert_string_equal(d1, d3);
	free(d1);
	free(d2);
	free(d3);
	rtd_agent_config_free(c);
	rtd_agent_config_free(c2);
	rtd_agent_config_free(c3);
}

static void yaml_load(void **state)
{
	(void)state;
	rtd_agent_config *c = cfg();
	assert_int_equal(rtd_agent_config_load_text(c, yaml_good,
						    strlen(yaml_good), "a.yaml"),
			 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	assert_int_equal(c->window_ns, 10000000000ull);
	assert_int_equal(c->scan_ns, 500000000ull);
	assert_int_equal(c->nspecs, 4);
	assert_int_equal(c->specs[0].kind, SPEC_DOTNET);
	assert_int_equal(c->specs[1].pid, 1);
	assert_string_equal(c->specs[2].arg, "^api$");
	assert_string_equal(c->specs[2].service, "checkout");
	assert_int_equal(c->specs[3].kind, SPEC_CGROUP);
	assert_int_equal(c->npush_headers, 1);
	assert_string_equal(c->push_headers[0], "Authorization: Bearer abc");
	assert_string_equal(c->push_tenant, "team-a");
	assert_int_equal(c->nlabels, 2);
	assert_string_equal(c->labels[1].key, "region");
	assert_string_equal(c->labels[1].val, "eu-1");
	assert_int_equal(c->max_memory, 128ull << 20);
	assert_int_equal(rtd_agent_config_log_level(c), RTD_LOG_WARN);
	assert_int_equal(c->dotnet_kinds, 0x9);
	assert_null(c->dotnet_counters);
	assert_int_equal(c->dotnet_cpu, DOTNET_CPU_PERF);
	assert_int_equal(c->cpu_hz, 49);

	roundtrip(c);
}

static void yaml_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"listen: [a, b]\n", "x.yaml:1:9: listen: want one value, not a list"},
		{"window: 10s\nwindw: 3s\n", "x.yaml:2:1: no option 'windw'"},
		{"target:\n  - {pid: 1, name: x}\n",
		 "x.yaml:2:14: a target has one of pid, name, cgroup or dotnet"},
		{"target:\n  - {service: x}\n",
		 "x.yaml:2:5: target: give pid, name, cgroup or dotnet"},
		{"target:\n  - {comm: x}\n", "target key 'comm'"},
		{"target:\n  - name=(\n", "x.yaml:2:5: name=(:"},
		{"- a\n- b\n", "x.yaml:1:1: want a mapping of option names"},
		{"window: [\n", "x.yaml:"},
		{"max-cpu: 1000%\n", "x.yaml:1:10: max-cpu: 1000% is outside"},
		{"label:\n  env: [x]\n", "label: want NAME: VALUE entries"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rtd_agent_config *c = cfg();
		int rc = rtd_agent_config_load_text(c, bad[i].text,
						    strlen(bad[i].text),
						    "x.yaml");
		if (rc != -RTD_E_INVAL)
			fail_msg("%s: %d", bad[i].text, rc);
		contains(rtd_agent_config_errmsg(c), bad[i].msg);
		rtd_agent_config_free(c);
	}
	/* an empty file sets nothing */
	rtd_agent_config *c = cfg();
	assert_int_equal(rtd_agent_config_load_text(c, "", 0, "e"), 0);
	assert_int_equal(rtd_agent_config_load_text(c, "target:\n", 8, "e"), 0);
	assert_int_equal(c->nspecs, 0);
	/* a file that is not there names itself */
	assert_true(rtd_agent_config_load(c, "/nonexistent/agent.yaml") < 0);
	contains(rtd_agent_config_errmsg(c), "/nonexistent/agent.yaml: No such");
	/* a file read from disk */
	char path[] = "/tmp/rtd-agent-cfg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml_good, strlen(yaml_good)),
			 (ssize_t)strlen(yaml_good));
	close(fd);
	assert_int_equal(rtd_agent_config_load(c, path), 0);
	assert_int_equal(c->nspecs, 4);
	unlink(path);
	/* too large */
	char *big = malloc(RTD_AGENT_MAX_CONFIG + 2);
	assert_non_null(big);
	memset(big, '#', RTD_AGENT_MAX_CONFIG + 1);
	assert_int_equal(rtd_agent_config_load_text(c, big,
						    RTD_AGENT_MAX_CONFIG + 1,
						    "big"), -RTD_E_INVAL);
	contains(rtd_agent_config_errmsg(c), "larger than");
	free(big);
	rtd_agent_config_free(c);
}

/* A target's flight: section (rtdiag/flight_recorder.h's options). */
static const char flight_good[] =
	"target:\n"
	"  - dotnet\n"
	"  - name: ^api$\n"
	"    service: checkout\n"
	"    flight:\n"
	"      ring: 8s\n"
	"      dir: /var/tmp/flight\n"
	"      trigger: ['cpu>90% for 10s', 'exception=System.TimeoutException']\n"
	"      post: 2s\n"
	"      cooldown: 1m\n"
	"      interval: 500ms\n"
	"      max-snapshots: 5\n"
	"      max-size: 64M\n"
	"      max-memory: 32M\n"
	"      format: chrome-json\n"
	"      providers: Rtd-Flight-Test\n"
	"      actions: [folded, pprof]\n";

static void flight_values(void **state)
{
	(void)state;
	rtd_agent_config *c = cfg();
	assert_int_equal(rtd_agent_config_load_text(c, flight_good, strlen(flight_good), "a.yaml"), 0);
	assert_int_equal(rtd_agent_config_check(c), 0);
	assert_int_equal(c->nspecs, 2);
	assert_null(c->specs[0].flight);
	const struct agent_flight *f = c->specs[1].flight;
	assert_non_null(f);
	assert_int_equal(f->ring_ns, 8000000000ull);
	assert_string_equal(f->dir, "/var/tmp/flight");
	assert_int_equal(f->ntriggers, 2);
	assert_string_equal(f->triggers[0], "cpu>90% for 10s");
	assert_int_equal(f->post_ns, 2000000000ull);
	assert_int_equal(f->cooldown_ns, 60000000000ull);
	assert_int_equal(f->interval_ns, 500000000ull);
	assert_int_equal(f->max_snapshots, 5);
	assert_int_equal(f->keep_bytes, 64ull << 20);
	assert_int_equal(f->max_memory, 32ull << 20);
	assert_int_equal(f->format, RTD_TIMELINE_FMT_CHROME_JSON);
	assert_string_equal(f->providers, "Rtd-Flight-Test");
	assert_int_equal(f->actions, RTD_FLIGHT_ACT_FOLDED | RTD_FLIGHT_ACT_PPROF);
	char *d1 = dump(c);
	contains(d1, "flight: {dir: \"/var/tmp/flight\", ring: 8s");
	free(d1);
	roundtrip(c);
}

static void flight_errors(void **state)
{
	(void)state;
	static const struct {
		const char *flight, *msg;
	} bad[] = {
		{"{dir: /tmp}", "give the ring"},
		{"{ring: 8s}", "give the folder"},
		{"{ring: 0s, dir: /tmp}", "ring: want a duration"},
		{"{ring: 8s, dir: /tmp, trigger: 'cpu>>9'}", "a.yaml:4:"},
		{"{ring: 8s, dir: /tmp, trigger: 'cpu>>9'}", "trigger 'cpu>>9'"},
		{"{ring: 8s, dir: /tmp, actions: [heapdump]}", "action 'heapdump'"},
		{"{ring: 8s, dir: /tmp, format: svg}", "want perfetto or chrome-json"},
		{"{ring: 8s, dir: /tmp, max-memory: 10k}", "at least 1M"},
		{"{ring: 8s, dir: /tmp, max-snapshots: 0}", "max-snapshots"},
		{"{ring: 8s, dir: /tmp, rings: 1}", "flight key 'rings'"},
		{"8s", "want a mapping"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "target:\n  - pid: 1\n    flight:\n      %s\n",
			 bad[i].flight);
		rtd_agent_config *c = cfg();
		int rc = rtd_agent_config_load_text(c, text, strlen(text), "a.yaml");
		if (rc == 0 || !strstr(rtd_agent_config_errmsg(c), bad[i].msg))
			fail_msg("'%s': rc %d, '%s' (want '%s')", bad[i].flight, rc,
				 rtd_agent_config_errmsg(c), bad[i].msg);
		rtd_agent_config_free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(option_table),
		cmocka_unit_test(defaults_and_check),
		cmocka_unit_test(values),
		cmocka_unit_test(specs),
		cmocka_unit_test(yaml_load),
		cmocka_unit_test(yaml_errors),
		cmocka_unit_test(flight_values),
		cmocka_unit_test(flight_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
