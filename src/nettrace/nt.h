/* SPDX-License-Identifier: MIT */
/*
 * nt.h - internals of the nettrace decoder shared by its files:
 * decoder.c (framing, blocks, event headers), metadata.c (event types),
 * payload.c (field walking, formatting), schema.c (built-in runtime
 * schemas), profiler.c (SampleProfiler CPU profiles).
 */
#ifndef RTD_NETTRACE_NT_H
#define RTD_NETTRACE_NT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/buf.h"
#include "common/map.h"
#include "common/rd.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/source.h"

/* Caps on sizes taken from the input (STYLE.md: every size has a name). */
#define NT_CAP_BLOCK_DEFAULT (16u << 20)   /* one block */
#define NT_CAP_METADATA_DEFAULT 65536u     /* distinct metadata ids */
#define NT_CAP_STACK_BYTES_DEFAULT (16u << 20) /* stacks per SP interval */
#define NT_CAP_META_BYTES (16u << 20)      /* all metadata records */
#define NT_CAP_FIELDS 4096u                /* fields in one metadata */
#define NT_CAP_DEPTH 16u                   /* nesting of structs/arrays */
#define NT_CAP_TYPE_NAME 64u               /* FastSerialization type name */
#define NT_CAP_THREADS 65536u              /* threads tracked for drops */
#define NT_CAP_LABELS (1u << 16)           /* V6 label lists per SP */
#define NT_CAP_ARRAY_ELEMS (1u << 20)      /* elements walked per array */
#define NT_CAP_STACK_FRAMES 4096u          /* frames in one stack */
#define NT_CAP_LENT_BYTES (64u << 20)      /* strings lent between two calls (default) */

/* Value and bit maps of the built-in schemas (schema_table.c). */
extern const struct rtd_nettrace_map nt_map_table[];

/* Built-in schema of one runtime event (schema.c). */
struct nt_schema {
	const char *provider;
	uint16_t event_id;
	uint8_t version;   /* the highest version the fields describe */
	uint8_t opcode;
	const char *name;  /* "Task/Opcode" */
	uint16_t nfields;
	const struct rtd_nettrace_field *fields;
};

/* Find the built-in schema for (provider, id, version); NULL if none. */
const struct nt_schema *nt_schema_find(const char *provider, uint32_t id,
				       uint32_t version);

/* One metadata record, one allocation: the public part first. */
struct nt_meta {
	struct rtd_nettrace_metadata pub;
	uint64_t seen;      /* events counted (for stats) */
	uint64_t bytes;     /* payload bytes counted */
	size_t alloc;       /* size of this allocation (NT_CAP_META_BYTES) */
	bool skip;          /* opts.want said no: counted, not delivered */
	/* format.c's text for this type, built on first use: JSON
	 * ',"provider":...,"seq":' then each top-level field's '"Name":';
	 * text ' Provider/Name' then ' Name=' per field */
	char *fmt_cache;
	uint32_t *fmt_keys;  /* 2 * (nfields + 1) offsets: JSON then text */
	/* the strings and the field tree follow in the same allocation */
};

/* Free what a metadata record owns besides itself. */
void nt_meta_free(struct nt_meta *m);

/* Parse a V3-V5 metadata payload (the payload of an event whose metadata
 * id is 0). Returns 0 or a negative code with dec's error set. */
int nt_meta_parse_v5(rtd_nettrace *dec, rtd_rd *r, int format,
		     uint64_t base, struct nt_meta **out);
/* Parse one V6 metadata row (after its u16 size). base: stream offset of
 * r->start (offsets count from there), for error messages. */
int nt_meta_parse_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base,
		     struct nt_meta **out);

struct nt_thread {
	uint64_t id;
	uint32_t last_seq;
	bool have_seq;
	uint64_t dropped;
};

struct nt_stack_ent {
	uint32_t start; /* index into stack_frames */
	uint32_t n;     /* frames */
};

/* NetTrace V6 (NetTraceFormat.md) tags, by the names the format gives
 * them. A thread block row's OptionalThreadInfo kinds: */
enum nt_thread_info {
	NT_THREAD_NAME = 1,
	NT_THREAD_OS_PROCESS_ID = 2,
	NT_THREAD_OS_THREAD_ID = 3,
	NT_THREAD_KEY_VALUE = 4,
};

/* A label's kind (its low 7 bits; the high bit ends a label list). */
enum nt_label_kind {
	NT_LABEL_ACTIVITY_ID = 1,
	NT_LABEL_RELATED_ACTIVITY_ID = 2,
	NT_LABEL_TRACE_ID = 3,
	NT_LABEL_SPAN_ID = 4,
	NT_LABEL_KEY_STRING = 5,
	NT_LABEL_KEY_VARINT = 6,
	NT_LABEL_OPCODE = 7,
	NT_LABEL_KEYWORDS = 8,
	NT_LABEL_LEVEL = 9,
	NT_LABEL_VERSION = 10,
	NT_LABEL_KIND_MASK = 0x7f,
	NT_LABEL_LAST = 0x80,
};

/* A metadata record's OptionalMetadata kinds (2 is not used). */
enum nt_meta_opt {
	NT_META_OPCODE = 1,
	NT_META_KEYWORD = 3,
	NT_META_MESSAGE_TEMPLATE = 4,
	NT_META_DESCRIPTION = 5,
	NT_META_KEY_VALUE = 6,
	NT_META_PROVIDER_GUID = 7,
	NT_META_LEVEL = 8,
	NT_META_VERSION = 9,
};

struct nt_label {
	uint8_t activity[16];
	uint8_t related[16];
};

/* An event held for time-ordered delivery (opts.sort). */
struct nt_held {
	uint64_t ts;
	uint64_t seq;  /* arrival order: ties keep stream order */
	size_t off;    /* its record in the sort arena */
	bool in_place; /* its payload is the caller's (opts.stable_input) */
};

#define NT_CAP_SORT_DEFAULT (256u << 20) /* events held for sorting */

/*
 * Header state of the event being decoded. The compressed format encodes
 * each header relative to the previous one, so the fields live here across
 * events, inside the very event view handed to the callback: decoding
 * straight into it avoids copying ~150 bytes per event.
 */
struct nt_hdr {
	struct rtd_nettrace_event ev;
	uint32_t meta_id;
	uint32_t label_id;
	uint64_t tid;     /* V6: thread indexes, mapped at delivery */
	uint64_t cap_tid;
};

struct rtd_nettrace {
	struct rtd_nettrace_opts o;
	int state;
	int format;            /* 3, 4, 5, 6; 0 before the header */
	uint64_t off;          /* stream offset of the next unconsumed byte */
	rtd_buf in;            /* bytes of an incomplete unit */
	size_t need;           /* total bytes the unit in `in` needs */
	int err;
	uint64_t err_off;
	char errmsg[320];
	struct rtd_nettrace_info info;
	bool have_info;
	int seen_end;
	/* rtd_nettrace_finish() parsing the incomplete last block: an event
	 * that runs past the bytes there ends it (NT_CUT), it is no error */
	bool salvage;
	uint64_t salvaged;     /* events delivered from that block */

	/* a feed paused by on_event (RTD_NT_PAUSE): what resumes it */
	bool pause_req;        /* on_event asked, honoured after its event */
	bool paused;           /* rtd_nettrace_feed() said RTD_NT_PAUSED */
	bool finishing;        /* rtd_nettrace_finish(): no more pauses */
	bool in_block;         /* the block being stepped stopped after an event */
	size_t block_at;       /* ...this many bytes into its body */
	struct nt_hdr block_h; /* ...with this header state (deltas follow it) */
	const uint8_t *rest;   /* the fed bytes not stepped yet */
	size_t rest_len;

	rtd_map meta;          /* id -> struct nt_meta * */
	size_t meta_bytes;     /* their allocations */
	struct nt_meta *last_meta;

	/* stacks since the last sequence point */
	uint64_t *frames;
	size_t nframes_used, frames_cap;
	struct nt_stack_ent *stacks;
	size_t nstacks, stacks_cap;
	uint32_t stack_base;   /* id of stacks[0] */
	uint64_t *scratch;     /* V3 inline stacks */
	size_t scratch_cap;

	/* dropped-event tracking, per capture thread */
	rtd_map threads;       /* id -> struct nt_thread * */
	struct nt_thread *last_thread;

	/* V6 tables */
	rtd_map v6threads;     /* index -> os thread id + 1 */
	struct nt_label *labels;
	size_t nlabels, labels_cap;
	uint32_t label_base;

	struct rtd_nettrace_stats st;

	/* format.c: each stack's rendered addresses, by id since the last
	 * sequence point (stacks are interned per interval) */
	rtd_buf stack_text;
	uint32_t *stack_text_at; /* per stack index: offset + 1, 0 unset */
	size_t stack_text_cap;
	unsigned stack_text_flags;

	/* time-ordered delivery (opts.sort) */
	rtd_buf sarena;        /* held events: header copy + payload */
	/* held[0..nheld): the events held, from held_base[held - held_base]
	 * (a partial release moves held on; appending compacts) */
	struct nt_held *held, *held_tmp, *held_base;
	size_t nheld, held_cap, held_sorted; /* held[0..held_sorted) sorted */
	uint64_t held_seq;
	bool flushing;

	/* scratch for payload walking and formatting */
	rtd_buf sbuf;
	rtd_buf fbuf;
	rtd_buf gbuf;          /* rtd_nettrace_get's string */
	/* opts.lend_strings: the walks' texts since the caller's last call
	 * (feed, resume, finish), and the first failure to keep one */
	rtd_arena lent;
	int lent_err;
	rtd_buf nbuf;          /* rtd_nettrace_format's value names */
	/* JSON text of mapped values' names, by (map, value): the maps are
	 * the built-in tables, so a pointer names one for the decoder's life */
	struct nt_name_memo {
		const struct rtd_nettrace_map *map;
		uint64_t value;
		int len;               /* of txt; -1: the value has no name */
		char txt[52];          /* the name quoted */
	} name_memo[64];
	/* JSON "key": of built-in schemas' nested fields, by the name's
	 * (static) address: BulkMovedObjectRanges has thousands a event */
	struct nt_key_memo {
		const char *name;
		int len;
		char txt[44];
	} key_memo[64];
};

/* A block parser's answer, in salvage mode, when the next event runs past
 * the bytes the stream has: the events before it are delivered. */
#define NT_CUT 1
/* A block parser's answer when on_event paused inside the block: the block
 * is stepped again on resume and goes on from dec->block_at. */
#define NT_PAUSED_BLOCK 2

/* Record a decoding error at an absolute offset; returns err. */
int nt_fail(rtd_nettrace *dec, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Absolute stream offset of a reader position. */
static inline uint64_t nt_off(const rtd_nettrace *dec, const rtd_rd *r,
			      uint64_t base)
{
	(void)dec;
	return base + rd_off(r);
}

/* Encoded size of a fixed-size type, 0 when variable (payload.c). */
size_t nt_fixed_size(const struct rtd_nettrace_field *f, size_t psz,
		     unsigned depth);

/* An array field's element count and the reader of its elements (r, or
 * a V6 RelLoc/DataLoc slice of the payload in *sub); payload.c. */
int nt_array(const struct rtd_nettrace_field *f, rtd_rd *r,
	     const uint8_t *payload, size_t payload_len, size_t psz,
	     unsigned depth, const uint64_t *sib, size_t nsib, size_t *count,
	     rtd_rd **er, rtd_rd *sub, size_t *located_end);

/*
 * Read a field of a number type at r (integers, bools, hex, pointers of
 * psz bytes, FILETIMEs): *u its bits, *i its signed value (zig-zag
 * decoded for VARINT; the bits again for unsigned types). Returns false,
 * reading nothing, for a type that is not a number; a short read leaves
 * r's sticky error set. The walker and the formatter share it.
 */
static inline bool nt_read_number(rtd_rd *r, unsigned type, size_t psz,
				  uint64_t *u, int64_t *i)
{
	switch (type) {
	case RTD_NT_T_I8: *i = (int8_t)rd_u8(r); break;
	case RTD_NT_T_I16: *i = rd_i16le(r); break;
	case RTD_NT_T_I32: *i = rd_i32le(r); break;
	case RTD_NT_T_I64: *i = rd_i64le(r); break;
	case RTD_NT_T_VARINT: {
		uint64_t z = rd_varuint(r);
		*i = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		break;
	}
	case RTD_NT_T_U8: case RTD_NT_T_BOOL8:
		*u = rd_u8(r); *i = (int64_t)*u; return true;
	case RTD_NT_T_U16:
		*u = rd_u16le(r); *i = (int64_t)*u; return true;
	case RTD_NT_T_U32: case RTD_NT_T_HEX32: case RTD_NT_T_BOOL32:
		*u = rd_u32le(r); *i = (int64_t)*u; return true;
	case RTD_NT_T_U64: case RTD_NT_T_HEX64: case RTD_NT_T_DATETIME:
		*u = rd_u64le(r); *i = (int64_t)*u; return true;
	case RTD_NT_T_POINTER:
		*u = psz == 8 ? rd_u64le(r) : rd_u32le(r);
		*i = (int64_t)*u;
		return true;
	case RTD_NT_T_VARUINT:
		*u = rd_varuint(r); *i = (int64_t)*u; return true;
	default:
		return false;
	}
	*u = (uint64_t)*i; /* the signed types */
	return true;
}

/* Render ev into out (appended, NUL-terminated); format.c. */
int nt_format(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
	      unsigned flags, rtd_buf *out, rtd_nettrace_frame_fn sym,
	      void *sym_ctx);


struct rtd_field;
/* A record field's type (RTD_FIELD_*) for a value of decoder type @type,
 * text when @str */
unsigned nt_field_type(unsigned type, bool str);
/* Whether nt_read_flat() reads @m's first @n top-level fields: named
 * numbers, floats and strings (lent: the decoder's lend_strings) */
bool nt_flat(const rtd_nettrace *dec, const struct rtd_nettrace_metadata *m, size_t n);
/* One step of reading a flat payload straight: pass over @skip bytes and
 * @ptrs pointers, then read (or pass over, @pass: a string, a varint)
 * field @field, of decoder type @type, into a field of type @rtype. */
struct nt_flat_step {
	uint32_t skip;
	uint16_t ptrs;
	uint16_t field;
	uint8_t type;
	uint8_t rtype;
	bool pass;
};
/* Strings read straight, kept converted by their UTF-16 bytes: a type's
 * name in every allocation tick is converted once (nt_read_flat()). Its
 * texts live as long as it; full, it keeps what it has. */
#define NT_STR_CACHE_MAX_BYTES 512u   /* a string longer is not kept */
#define NT_STR_CACHE_ENTRIES 4096u    /* strings kept */
#define NT_STR_CACHE_ARENA (1u << 20) /* their bytes, both forms */
struct nt_str_cache {
	rtd_map index; /* hash of the UTF-16 bytes -> entry + 1 */
	struct nt_str_ent {
		const uint8_t *raw; /* the UTF-16 bytes */
		size_t raw_len;
		const char *str; /* as UTF-8 */
	} *ents;
	size_t n;
	rtd_arena mem;
	/* the last strings found, latest first: tried before the hash (an
	 * allocation tick's type is most often one of the last few) */
	const struct nt_str_ent *recent[4];
};
void nt_str_cache_init(struct nt_str_cache *c);
void nt_str_cache_free(struct nt_str_cache *c);

/* The steps reading @m's first @n top-level fields (nt_flat()) but those
 * of bit i in @skip into @steps (room for @n): how many. */
size_t nt_flat_plan(const struct rtd_nettrace_metadata *m, size_t n, uint64_t skip,
		    struct nt_flat_step *steps);
/* @ev's fields by @steps into @out as rtd_nettrace_walk() gives them,
 * named @names[field], strings from @cache when there (may be NULL);
 * *@nout gets how many. Returns 0, -RTD_E_NT_PAYLOAD
 * when the payload ends early (*@nout those before), or an error. */
int nt_read_flat(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
		 const struct nt_flat_step *steps, size_t nsteps, struct rtd_field *out,
		 size_t *nout, const char *const *names, struct nt_str_cache *cache);

/* How many of @m's top-level fields a consumer reading @names (n of them)
 * needs: up to the last of them present (rtd_nettrace_source_opts.fields) */
size_t nt_fields_upto(const struct rtd_nettrace_metadata *m, const char *const *names,
		      size_t n);

/* The events that name code (methods.c learns from them): which, by the
 * runtime's and the rundown's event ids. */
enum nt_names {
	NT_NAMES_NONE,
	NT_NAMES_METHOD,        /* MethodLoadVerbose, MethodDCStart/EndVerbose */
	NT_NAMES_R2R,           /* R2RGetEntryPoint */
	NT_NAMES_MODULE,        /* ModuleLoad, ModuleDCStart/End */
	NT_NAMES_DOMAIN_MODULE, /* DomainModuleLoad, DomainModuleDCStart/End */
};
enum nt_names nt_names_of(const struct rtd_nettrace_metadata *md);
/* How many method and module events @m has taken: a name it gave for an
 * address stays its answer while this does not change. */
uint64_t nt_methods_changes(const rtd_nettrace_methods *m);

/* The method whose code holds an address, from a method table
 * (methods.c), its parts apart: the profiler formats them itself. */
struct nt_method_hit {
	const char *name;   /* "Namespace.Method(sig)" */
	const char *module; /* the module's short name, NULL when not known */
	uint64_t module_id; /* 0: not given (an R2R entry point) */
};
bool nt_methods_find(rtd_nettrace_methods *m, uint64_t ip,
		     struct nt_method_hit *hit);

#endif /* RTD_NETTRACE_NT_H */
