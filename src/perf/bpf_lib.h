/* SPDX-License-Identifier: MIT */
/*
 * bpf_lib.h - libbpf, opened at run time (dlopen) by the commands that
 * load a BPF program, so that no other command maps it at startup; and
 * the reason, in one line, when BPF cannot be used here.
 */
#ifndef RTD_PERF_BPF_LIB_H
#define RTD_PERF_BPF_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef RTD_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* The libbpf functions rtdiag calls, resolved from libbpf.so.1. */
struct bpf_lib {
	__typeof__(libbpf_set_print) *set_print;
	__typeof__(bpf_object__open_mem) *object_open_mem;
	__typeof__(bpf_object__load) *object_load;
	__typeof__(bpf_object__close) *object_close;
	__typeof__(bpf_object__find_map_by_name) *find_map;
	__typeof__(bpf_object__find_program_by_name) *find_prog;
	__typeof__(bpf_program__attach) *attach;
	__typeof__(bpf_link__destroy) *link_destroy;
	__typeof__(bpf_map__fd) *map_fd;
	__typeof__(bpf_map_get_next_key) *get_next_key;
	__typeof__(bpf_map_lookup_elem) *lookup;
	__typeof__(bpf_map_update_elem) *update;
	__typeof__(ring_buffer__new) *rb_new;
	__typeof__(ring_buffer__poll) *rb_poll;
	__typeof__(ring_buffer__consume) *rb_consume;
	__typeof__(ring_buffer__free) *rb_free;
};

/* libbpf, opened once per process (thread-safe); NULL with why[] filled
 * when it cannot be. */
const struct bpf_lib *bpf_lib_get(char *why, size_t whylen);

/*
 * Open and load an embedded BPF object (name for messages). Returns the object, or NULL with why[] filled: a refusal is told as
 * what the process lacks (root, or CAP_BPF and CAP_PERFMON).
 */
struct bpf_object *bpf_lib_load(const struct bpf_lib *l, const char *name,
				 const void *obj, size_t len, char *why,
				 size_t whylen);

/* The fd of a map of a loaded object, -1 when it has none by that name. */
int bpf_lib_map_fd(const struct bpf_lib *l, struct bpf_object *o,
		   const char *name);

/* Attach the n programs of a loaded object, the last first (followers of
 * forks and execs before the program they feed); 0, or -1 with why[]. */
int bpf_lib_attach_all(const struct bpf_lib *l, struct bpf_object *o,
		       const char *const *progs, struct bpf_link **links,
		       int n, char *why, size_t whylen);

/* Detach the n links (NULL ones skipped) and close the object (NULL:
 * none). */
void bpf_lib_close(const struct bpf_lib *l, struct bpf_object *o,
		   struct bpf_link **links, int n);

/* Fill a follow.bpf.h pids map: each pid on, or on at its next exec;
 * 0, or -1 with why[]. */
int bpf_lib_set_pids(const struct bpf_lib *l, struct bpf_object *o,
		     const char *map, const pid_t *pids, size_t npids,
		     bool on_exec, char *why, size_t whylen);
#endif

#endif /* RTD_PERF_BPF_LIB_H */
