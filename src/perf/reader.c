/* SPDX-License-Identifier: MIT */
/*
 * reader.c - the perf monitor's reader thread (RTD_PERF_READER_THREAD).
 *
 * The thread that decodes and hands out records is slow (a callback that
 * prints takes about a microsecond a record) and, on a loaded machine,
 * often not scheduled for hundreds of milliseconds: meanwhile the kernel's
 * rings fill and it drops records. perf record avoids that by only copying
 * the rings out; this thread does the same: it copies whole records from
 * each kernel ring into a per-CPU copy in our memory (a power-of-two byte
 * ring, its size from rtd_perf_opts.copy_cap), writes data_tail back at
 * once, and wakes the decoding thread, which merges the copies exactly as
 * it merges the kernel rings in the single-thread mode (monitor.c).
 *
 * A copy that is full stops the copying of its ring: the kernel ring then
 * fills and the kernel drops and counts records (PERF_RECORD_LOST) as it
 * would without the thread, so loss stays exact and memory bounded.
 *
 * Order: a pass notes its start time, copies every ring up to the
 * data_head it reads, then publishes the start time of the pass before
 * (pub_limit): a record stamped before it had been committed when this
 * pass read data_head, so it is in a copy (perf's finished-round rule,
 * with a reader pass for a round). A ring whose copy was full is behind:
 * for it the bound is the timestamp of the last record copied (each ring
 * is in time order), which the decoder reads at pub_last.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "perf/internal.h"

static uint64_t floor_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p <= v / 2)
		p *= 2;
	return p;
}

int perf_copies_setup(struct rtd_perf_monitor *m)
{
	if (m->copy_bytes)
		return 0;
	uint64_t cap = m->opts.copy_cap ? m->opts.copy_cap
					: RTD_PERF_COPY_CAP_DEFAULT;
	uint64_t per = floor_pow2(cap / (m->ncpus ? m->ncpus : 1));
	/* at least the kernel ring, and room for the largest record twice */
	if (per < m->rings[0].size)
		per = m->rings[0].size;
	if (per < 2u * RTD_PERF_MAX_RECORD)
		per = 2u * RTD_PERF_MAX_RECORD;
	m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->space_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->wake_fd < 0 || m->space_fd < 0)
		goto fail;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		/* pages are backed as they are first written */
		void *b = mmap(NULL, per, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (b == MAP_FAILED)
			goto fail;
		rg->kdata = rg->data;
		rg->ksize = rg->size;
		rg->ktail = rg->tail;
		rg->data = b;
		rg->size = per;
		rg->head = rg->tail = rg->wr = 0;
		rg->pub_wr = rg->pub_rd = rg->pub_last = 0;
		rg->pub_full = false;
		rg->has_next = false;
	}
	if (pthread_mutex_init(&m->rlock, NULL))
		goto fail;
	m->rlock_ready = true;
	m->copy_bytes = per;
	return 0;
fail:;
	int e = errno ? -errno : -ENOMEM;
	m->copy_bytes = per; /* what perf_copies_free unmaps */
	perf_copies_free(m);
	return perf_set_err(m, e, "reader thread: %llu-byte copies: %s",
			    (unsigned long long)per, strerror(-e));
}

void perf_copies_free(struct rtd_perf_monitor *m)
{
	if (!m->copy_bytes)
		return;
	for (unsigned i = 0; m->rings && i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		if (!rg->kdata)
			continue;
		munmap(rg->data, rg->size);
		rg->data = rg->kdata;
		rg->size = rg->ksize;
		rg->tail = rg->ktail;
		rg->kdata = NULL;
	}
	if (m->wake_fd >= 0)
		close(m->wake_fd);
	if (m->space_fd >= 0)
		close(m->space_fd);
	m->wake_fd = m->space_fd = -1;
	if (m->rlock_ready)
		pthread_mutex_destroy(&m->rlock);
	m->rlock_ready = false;
	m->copy_bytes = 0;
}

/* Copy n bytes from the kernel ring at kpos into the copy at cpos. */
static void kcopy(struct perf_ring *rg, uint64_t kpos, uint64_t cpos,
		  uint64_t n)
{
	while (n) {
		uint64_t ko = kpos & (rg->ksize - 1);
		uint64_t co = cpos & (rg->size - 1);
		uint64_t len = n;
		if (len > rg->ksize - ko)
			len = rg->ksize - ko;
		if (len > rg->size - co)
			len = rg->size - co;
		memcpy(rg->data + co, rg->kdata + ko, len);
		kpos += len;
		cpos += len;
		n -= len;
	}
}

uint64_t perf_reader_pass(struct rtd_perf_monitor *m, uint64_t prev_start)
{
	uint64_t most = 0;
	bool any_full = false;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		struct perf_event_mmap_page *pc = rg->base;
		pthread_mutex_lock(&m->rlock);
		uint64_t rd = rg->pub_rd;
		pthread_mutex_unlock(&m->rlock);
		uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
		uint64_t avail = head - rg->ktail;
		uint64_t room = rg->size - (rg->wr - rd);
		uint64_t n = 0, last = rg->pub_last;
		bool full = false, bad = false;
		/* whole records only; headers are 8-aligned, never wrap */
		while (n < avail) {
			struct perf_event_header h;
			memcpy(&h, rg->kdata + ((rg->ktail + n) & (rg->ksize - 1)),
			       sizeof(h));
			if (h.size < sizeof(h) || (h.size & 7) ||
			    h.size > avail - n) {
				bad = !n;
				break;
			}
			if (n + h.size > room) {
				full = true;
				break;
			}
			last = rg->wr + n;
			n += h.size;
		}
		if (bad) {
			/* cannot happen with a sane kernel; skip what is there */
			rtd_warn("perf: cpu %d: corrupt ring at %llu (head %llu): "
				 "skipped", rg->cpu,
				 (unsigned long long)rg->ktail,
				 (unsigned long long)head);
			rg->ktail = head;
			__atomic_store_n(&pc->data_tail, rg->ktail,
					 __ATOMIC_RELEASE);
		}
		if (n) {
			kcopy(rg, rg->ktail, rg->wr, n);
			rg->wr += n;
			rg->ktail += n;
			/* the kernel may write there again from now on */
			__atomic_store_n(&pc->data_tail, rg->ktail,
					 __ATOMIC_RELEASE);
			if (n > most)
				most = n;
		}
		pthread_mutex_lock(&m->rlock);
		rg->pub_wr = rg->wr;
		rg->pub_last = last;
		rg->pub_full = full;
		if (rg->wr - rg->pub_rd > m->copy_max)
			m->copy_max = rg->wr - rg->pub_rd;
		if (bad)
			m->copy_bad++;
		pthread_mutex_unlock(&m->rlock);
		any_full |= full;
	}
	pthread_mutex_lock(&m->rlock);
	m->pub_limit = prev_start;
	if (any_full)
		m->copy_full++;
	pthread_mutex_unlock(&m->rlock);
	return most;
}

void perf_efd_post(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));
	(void)w;
}

bool perf_rings_hup(const struct pollfd *pfd, unsigned n)
{
	unsigned hups = 0;
	for (unsigned i = 0; i < n; i++)
		if (pfd[i].revents & (POLLHUP | POLLERR))
			hups++;
	return hups == n;
}

void perf_pidfds_poll(const struct rtd_perf_monitor *m, struct pollfd *pfd)
{
	for (size_t i = 0; i < m->npidfds; i++) {
		pfd[i].fd = m->pidfds[i];
		pfd[i].events = POLLIN;
	}
}

bool perf_pidfds_gone(const struct rtd_perf_monitor *m,
		      const struct pollfd *pfd)
{
	size_t gone = 0;
	for (size_t i = 0; i < m->npidfds; i++)
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
			gone++; /* a pidfd reads when its process has exited */
	return m->npidfds && gone == m->npidfds;
}

/*
 * The reader's priority. It shares run()'s process, and with it its
 * autogroup: at load 12 on 2 CPUs, at run()'s priority or even at nice
 * -10 it got a CPU too late after the kernel woke it, and rings
 * overflowed (19047 and 61694 records lost in 10 s) while perf record,
 * a single thread asleep in poll(), lost none. At the lowest real-time
 * priority it runs when woken: 0 lost in 3 runs of 10 s. Its work is
 * bounded: woken at a ring's watermark, it copies (memcpy) and sleeps
 * again; it reads again at once only while a ring had more than the
 * watermark waiting, and a full copy puts it to sleep; the kernel's
 * real-time throttling bounds it besides. Without the right to
 * (CAP_SYS_NICE or RLIMIT_RTPRIO) it asks for nice -10, else keeps
 * run()'s priority.
 */
#define PERF_READER_RT_PRIO 1
#define PERF_READER_NICE_BOOST 10

static void reader_boost(void)
{
	struct sched_param sp = {.sched_priority = PERF_READER_RT_PRIO};
	int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (!e)
		return;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		return;
	if (setpriority(PRIO_PROCESS, (id_t)tid, nice - PERF_READER_NICE_BOOST))
		rtd_debug("perf: reader thread: SCHED_FIFO: %s; nice %d: %s "
			  "(it keeps %d)", strerror(e),
			  nice - PERF_READER_NICE_BOOST, strerror(errno), nice);
}

void *perf_reader_main(void *arg)
{
	struct rtd_perf_monitor *m = arg;
	reader_boost();
	struct pollfd *pfd = calloc(m->ncpus + 2 + m->npidfds, sizeof(*pfd));
	if (pfd) {
		pfd[0].fd = m->stop_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = m->space_fd;
		pfd[1].events = POLLIN;
		for (unsigned i = 0; i < m->ncpus; i++) {
			pfd[i + 2].fd = m->rings[i].fd;
			pfd[i + 2].events = POLLIN;
		}
		perf_pidfds_poll(m, pfd + 2 + m->ncpus);
	}
	while (pfd && !atomic_load(&m->reader_quit) &&
	       !perf_stop_pending(m)) {
		uint64_t start = rtd_now_ns();
		uint64_t n = perf_reader_pass(m, m->pass_prev);
		m->pass_prev = start;
		perf_efd_post(m->wake_fd);
		/*
		 * Read again at once only when a ring had more than its wakeup
		 * watermark waiting (we are behind); else sleep till the kernel
		 * wakes us at the watermark. A thread that spins whenever a
		 * record came was, at load 12 on 2 CPUs, scheduled so late that
		 * rings overflowed; one that sleeps is woken in time. A full
		 * copy waits for the decoder to free space (space_fd).
		 */
		int k = poll(pfd, m->ncpus + 2 + m->npidfds,
			     n >= m->wakeup_bytes ? 0 : (int)m->max_latency_ms);
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && perf_stop_woken(m))
			break; /* rtd_perf_monitor_stop(); the decoder sees it */
		if (pfd[1].revents & POLLIN) {
			uint64_t v;
			ssize_t rr = read(m->space_fd, &v, sizeof(v));
			(void)rr;
		}
		if (perf_rings_hup(pfd + 2, m->ncpus) ||
		    perf_pidfds_gone(m, pfd + 2 + m->ncpus))
			break; /* the observed processes are gone */
	}
	free(pfd);
	pthread_mutex_lock(&m->rlock);
	m->reader_done = true;
	pthread_mutex_unlock(&m->rlock);
	perf_efd_post(m->wake_fd);
	return NULL;
}
