/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - /metrics in the Prometheus text exposition format 0.0.4:
 * per target its CPU time, memory, threads and what the agent sampled of
 * it, labelled service, pid, runtime and (when its cgroup names them)
 * container and pod; the agent's own health: targets, windows, uploads,
 * dropped windows, errors, throttling; and the usual process_* metrics of
 * the agent itself.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "common/buf.h"


int prom_escape(rtd_buf *b, const char *s)
{
	int rc = 0;
	for (; *s && !rc; s++) {
		if (*s == '\\')
			rc = rtd_buf_puts(b, "\\\\");
		else if (*s == '"')
			rc = rtd_buf_puts(b, "\\\"");
		else if (*s == '\n')
			rc = rtd_buf_puts(b, "\\n");
		else
			rc = rtd_buf_putc(b, *s);
	}
	return rc;
}

static int label(rtd_buf *b, bool *first, const char *k, const char *v)
{
	int rc = rtd_buf_printf(b, "%s%s=\"", *first ? "" : ",", k);
	rc |= prom_escape(b, v);
	rc |= rtd_buf_putc(b, '"');
	*first = false;
	return rc;
}

/* The labels of a target, without braces: service="..",pid="..",... */
static int target_label_set(struct agent *a, const struct target *t,
			    rtd_buf *b)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	bool first = true;
	int rc = label(b, &first, "service", t->service);
	rc |= label(b, &first, "pid", pid);
	if (t->ids.container_id[0])
		rc |= label(b, &first, "container", t->ids.container_id);
	if (t->ids.pod_uid[0])
		rc |= label(b, &first, "pod", t->ids.pod_uid);
	for (size_t i = 0; i < a->c->nlabels; i++)
		rc |= label(b, &first, a->c->labels[i].key, a->c->labels[i].val);
	return rc;
}

/* The labels of a target in braces, and extra pairs: {service="..",...} */
static int target_labels(struct agent *a, const struct target *t, rtd_buf *b,
			 const char *const *extra, size_t nextra)
{
	int rc = rtd_buf_putc(b, '{');
	rc |= target_label_set(a, t, b);
	bool first = false;
	for (size_t i = 0; i + 1 < nextra; i += 2)
		rc |= label(b, &first, extra[i], extra[i + 1]);
	rc |= rtd_buf_putc(b, '}');
	return rc;
}

static int family(rtd_buf *b, const char *name, const char *type,
		  const char *help)
{
	return rtd_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
			      name, type);
}

/* The agent's own labels (the static ones), "" when none. */
static int own_labels(struct agent *a, rtd_buf *b)
{
	if (!a->c->nlabels)
		return 0;
	bool first = true;
	int rc = rtd_buf_putc(b, '{');
	for (size_t i = 0; i < a->c->nlabels; i++)
		rc |= label(b, &first, a->c->labels[i].key, a->c->labels[i].val);
	return rc | rtd_buf_putc(b, '}');
}

static int own(struct agent *a, rtd_buf *b, const char *name,
	       const char *type, const char *help, double v)
{
	int rc = family(b, name, type, help);
	rc |= rtd_buf_puts(b, name);
	rc |= own_labels(a, b);
	return rc | rtd_buf_printf(b, " %.15g\n", v);
}

/* Each per-target family's value of target t (tck: clock ticks a second). */
static double v_cpu(const struct target *t, double tck)
{
	return (double)(t->st.utime_ticks + t->st.stime_ticks) / tck;
}
static double v_rss(const struct target *t, double tck)
{
	(void)tck;
	return (double)t->st.rss_bytes;
}
static double v_vsize(const struct target *t, double tck)
{
	(void)tck;
	return (double)t->st.vsize_bytes;
}
static double v_threads(const struct target *t, double tck)
{
	(void)tck;
	return (double)t->st.threads;
}
static double v_start(const struct target *t, double tck)
{
	(void)tck;
	return (double)t->start_unix;
}
static double v_info(const struct target *t, double tck)
{
	(void)t, (void)tck;
	return 1;
}
static double v_profiled(const struct target *t, double tck)
{
	(void)tck;
	return (double)t->samples_ns[PK_CPU] / 1e9;
}

/* Per target: CPU, memory, threads, start time, what it is, and what the
 * agent sampled of it; the agent's lock held. */
static int target_metrics(struct agent *a, rtd_buf *b, double tck)
{
	int rc = 0;
	static const struct {
		const char *name, *type, *help;
		double (*value)(const struct target *t, double tck);
	} fam[] = {
		{"rtdiag_process_cpu_seconds_total", "counter",
		 "CPU time of a target process (user and system), in seconds.", v_cpu},
		{"rtdiag_process_resident_memory_bytes", "gauge",
		 "Resident memory of a target process, in bytes.", v_rss},
		{"rtdiag_process_virtual_memory_bytes", "gauge",
		 "Virtual memory of a target process, in bytes.", v_vsize},
		{"rtdiag_process_threads", "gauge",
		 "Threads of a target process.", v_threads},
		{"rtdiag_process_start_time_seconds", "gauge",
		 "Start time of a target process, in seconds since the epoch.", v_start},
		{"rtdiag_target_info", "gauge",
		 "A target the agent profiles: its runtime and executable (the "
		 "value is 1).", v_info},
		{"rtdiag_target_profiled_cpu_seconds_total", "counter",
		 "CPU time the agent's samples of a target account for, in "
		 "seconds.", v_profiled},
	};
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]) && !rc; f++) {
		rc |= family(b, fam[f].name, fam[f].type, fam[f].help);
		for (struct target *t = a->targets; t && !rc; t = t->next) {
			if (!target_listed(t))
				continue;
			double v = fam[f].value(t, tck);
			rc |= rtd_buf_puts(b, fam[f].name);
			if (fam[f].value == v_info) {
				const char *info[] = {"runtime", t->runtime,
						      "exe", t->exe};
				rc |= target_labels(a, t, b, info, 4);
			} else {
				rc |= target_labels(a, t, b, NULL, 0);
			}
			rc |= rtd_buf_printf(b, " %.15g\n", v);
		}
	}
	if (!rc)
		rc = series_write(a, b, target_label_set);
	return rc;
}

/* The OTLP backend's uploads, errors, drops and queue. */
static int otlp_health(struct agent *a, rtd_buf *b,
		       const struct rtd_agent_stats *st, size_t oqueued)
{
	int rc = 0;
	rc |= own(a, b, "rtdiag_agent_otlp_uploads_total", "counter",
		  "Windows the OTLP backend accepted.",
		  (double)st->otlp_uploads);
	rc |= own(a, b, "rtdiag_agent_otlp_upload_errors_total",
		  "counter",
		  "OTLP upload attempts that failed (each retry counts).",
		  (double)st->otlp_upload_errors);
	rc |= own(a, b, "rtdiag_agent_otlp_dropped_windows_total",
		  "counter",
		  "Windows dropped on the way to the OTLP backend: its "
		  "queue was full (the oldest go) or it refused them.",
		  (double)st->otlp_dropped_windows);
	rc |= own(a, b, "rtdiag_agent_otlp_rejected_profiles_total",
		  "counter",
		  "Profiles the OTLP backend rejected in exports it "
		  "accepted (partial success).",
		  (double)st->otlp_rejected_profiles);
	rc |= own(a, b, "rtdiag_agent_otlp_queue_windows", "gauge",
		  "Windows waiting for the OTLP backend.",
		  (double)oqueued);
	return rc;
}

/* The agent's own health: targets, windows, uploads, drops, caps. */
static int agent_health(struct agent *a, rtd_buf *b,
			const struct rtd_agent_stats *st)
{
	size_t queued = push_queue_len(a->push);
	size_t oqueued = push_queue_len(a->otlp);
	int rc = 0;
	rc |= own(a, b, "rtdiag_agent_targets", "gauge",
		  "Targets the agent profiles now (those /targets lists).",
		  (double)st->targets);
	rc |= own(a, b, "rtdiag_agent_targets_found_total", "counter",
		  "Targets found since the agent started.",
		  (double)st->targets_seen);
	rc |= own(a, b, "rtdiag_agent_targets_exited_total", "counter",
		  "Targets whose process exited.", (double)st->targets_exited);
	rc |= own(a, b, "rtdiag_agent_source_errors_total", "counter",
		  "Profile sources that failed (a refused session, no "
		  "permission, a broken stream).",
		  (double)st->target_errors);
	rc |= own(a, b, "rtdiag_agent_dotnet_dropped_bytes_total", "counter",
		  "Bytes of .NET session streams dropped past a session's read "
		  "buffer (dotnet-read-buffer): the agent fell that far behind.",
		  (double)st->dotnet_dropped_bytes);
	rc |= own(a, b, "rtdiag_agent_dotnet_damaged_sessions_total", "counter",
		  "Sessions of .NET targets that dropped bytes so, each ended at the damage.",
		  (double)st->dotnet_damaged_sessions);
	rc |= own(a, b, "rtdiag_agent_windows_total", "counter",
		  "Profile windows closed (all targets and kinds).",
		  (double)st->windows);
	rc |= own(a, b, "rtdiag_agent_uploads_total", "counter",
		  "Windows the push backend accepted.", (double)st->uploads);
	rc |= own(a, b, "rtdiag_agent_upload_errors_total", "counter",
		  "Upload attempts that failed (each retry counts).",
		  (double)st->upload_errors);
	rc |= own(a, b, "rtdiag_agent_dropped_windows_total", "counter",
		  "Windows dropped: the push queue was full (the oldest go) "
		  "or the backend refused them.",
		  (double)st->dropped_windows);
	rc |= own(a, b, "rtdiag_agent_push_queue_windows", "gauge",
		  "Windows waiting for the push backend.", (double)queued);
	if (a->otlp)
		rc |= otlp_health(a, b, st, oqueued);
	rc |= own(a, b, "rtdiag_agent_pprof_requests_total", "counter",
		  "pprof requests answered.", (double)st->pulls);
	uint64_t refused[HTTP_REFUSALS];
	const char *why[HTTP_REFUSALS];
	http_refusals(a, refused, why, HTTP_REFUSALS);
	rc |= family(b, "rtdiag_agent_http_refused_total", "counter",
		     "Connections and requests the HTTP server turned away, by "
		     "reason: an address over its share of connections or "
		     "profile requests, the server full, a waiting connection "
		     "closed to make room, bytes that are not HTTP, request "
		     "headers not read within the deadline, every profile "
		     "request slot taken, a missing or wrong token.");
	for (size_t i = 0; i < HTTP_REFUSALS; i++) {
		bool first = true;
		rc |= rtd_buf_puts(b, "rtdiag_agent_http_refused_total{");
		rc |= label(b, &first, "reason", why[i]);
		for (size_t k = 0; k < a->c->nlabels; k++)
			rc |= label(b, &first, a->c->labels[k].key,
				    a->c->labels[k].val);
		rc |= rtd_buf_printf(b, "} %llu\n",
				     (unsigned long long)refused[i]);
	}
	rc |= own(a, b, "rtdiag_agent_throttled_seconds_total", "counter",
		  "Time the sources were paused to keep the agent under its "
		  "CPU cap, in seconds.", (double)st->throttled_ns / 1e9);
	rc |= own(a, b, "rtdiag_agent_memory_sheds_total", "counter",
		  "Times the agent shed profiles and queued uploads to stay "
		  "under its memory cap.", (double)st->shed);
	rc |= own(a, b, "rtdiag_agent_cpu_cap_ratio", "gauge",
		  "The agent's CPU cap, as a fraction of one CPU.",
		  a->c->max_cpu / 100.0);
	rc |= own(a, b, "rtdiag_agent_memory_cap_bytes", "gauge",
		  "The agent's resident memory cap, in bytes.",
		  (double)a->c->max_memory);

	return rc;
}

/* The agent itself, as every Prometheus client library names it. */
static int agent_process(struct agent *a, rtd_buf *b, double tck)
{
	int rc = 0;
	struct proc_stat self;
	if (proc_stat_read(a->c->proc_dir, getpid(), &self) == 0) {
		rc |= own(a, b, "process_cpu_seconds_total", "counter",
			  "Total user and system CPU time spent in seconds.",
			  (double)(self.utime_ticks + self.stime_ticks) / tck);
		rc |= own(a, b, "process_resident_memory_bytes", "gauge",
			  "Resident memory size in bytes.",
			  (double)self.rss_bytes);
		rc |= own(a, b, "process_virtual_memory_bytes", "gauge",
			  "Virtual memory size in bytes.",
			  (double)self.vsize_bytes);
		rc |= own(a, b, "process_start_time_seconds", "gauge",
			  "Start time of the process since unix epoch in "
			  "seconds.",
			  (double)a->boot_time +
				  (double)self.start_ticks / tck);
	}
	return rc;
}

int metrics_write(struct agent *a, rtd_buf *b)
{
	double tck = (double)proc_clk_tck();
	pthread_mutex_lock(&a->lock);
	struct rtd_agent_stats st = a->st;
	/* the gauge counts what /targets lists: not a target whose first
	 * starts have not answered yet */
	st.targets = 0;
	for (const struct target *t = a->targets; t; t = t->next)
		st.targets += target_listed(t);
	int rc = target_metrics(a, b, tck);
	pthread_mutex_unlock(&a->lock);
	agent_spool_stats(a, &st);
	if (rc)
		return -ENOMEM;

	rc |= agent_health(a, b, &st);
	rc |= agent_process(a, b, tck);
	return rc ? -ENOMEM : 0;
}
