/*
 * orrery.h: the C interface of orrery's shared library, ABI version 1.
 *
 * Build the library with
 *
 *     go build -buildmode=c-shared -trimpath -o liborrery.so ./bindings/c
 *
 * and link with -lorrery (or load it with dlopen / Python's ctypes). The
 * functions mirror the WebAssembly module's exports (package wasm/abi) with
 * native pointers: orrery_call takes a schema-v1 request envelope and
 * returns the response envelope, byte for byte what the Go engine's
 * orrery.Handle returns; orrery_link_search is the flat rotation search.
 *
 * Every function is safe to call from several threads at once; calls on one
 * scheduler handle run one at a time. The library
 * checks values, not pointers: pointers must be valid for the lengths
 * given (NULL is allowed where noted).
 */
#ifndef ORRERY_H
#define ORRERY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ORRERY_ABI_VERSION 1

/* Status codes of orrery_link_search. */
#define ORRERY_OK 0               /* success */
#define ORRERY_INVALID_ARGUMENT 1 /* a value is out of its domain */
#define ORRERY_LIMIT_EXCEEDED 2   /* a size or perimeter limit was hit */
#define ORRERY_INTERNAL 3         /* a bug: please report it */
#define ORRERY_BAD_POINTER 4      /* a required pointer is NULL; nothing was written */

/* Options of orrery_link_search (32 bytes). All zero means the defaults. */
typedef struct orrery_link_options {
	int32_t mode;          /* 0 exact (every tick, every shift), 1 paper (72 angles, 5-degree rotations) */
	int32_t max_perimeter; /* cap on the shared circle in ticks; 0 default (2^20), at most 2^24 */
	int32_t round_periods; /* 1: past the cap, round periods up to a coarser common grid */
	int32_t restarts;      /* coordinate-descent starts; 0 default (4), at most 65536 */
	int64_t budget;        /* pair evaluations; 0 default (2^26), -1 unlimited, below -1 invalid */
	uint64_t seed;         /* seed of the restarts */
} orrery_link_options;

/* Result of orrery_link_search (256 bytes). */
typedef struct orrery_link_result {
	int32_t status;      /* 0 optimal, 1 budget (best found when the budget ran out) */
	int32_t points;      /* |A|: the perimeter (exact) or 72 (paper) */
	int32_t perimeter;   /* unified circle, ticks */
	int32_t grid;        /* periods rounded up to multiples of this; 1 if not rounded */
	int64_t excess;      /* unit-ticks over capacity, summed over the points */
	int64_t evaluations; /* pair evaluations spent */
	double score;        /* 1 - excess / (points * capacity) */
	double bound;        /* upper bound on the optimal score; equal to score when optimal */
	double unshifted;    /* score with every free job at shift 0 */
	char message[200];   /* on an error: the reason, NUL-terminated */
} orrery_link_result;

/*
 * A session holds the handles of the stateful operations
 * ("shockwave.scheduler.new" answers one; the other "shockwave.scheduler.*"
 * operations take it). orrery_call runs in the library's default session;
 * orrery_session_new opens another. 0 is no session.
 */
typedef uint64_t orrery_session;

/*
 * The library's own build (cgo, which cannot spell const) declares the
 * functions itself.
 */
#ifndef ORRERY_BUILDING_LIBRARY

/* orrery_abi_version returns ORRERY_ABI_VERSION. */
int32_t orrery_abi_version(void);

/*
 * orrery_call runs one request envelope of len bytes,
 *
 *     {"op": "cassini.link", "request": {...}}
 *
 * and returns the response envelope, NUL-terminated, in memory the caller
 * releases with orrery_free; *out_len (if out_len is not NULL) receives its
 * length without the NUL. It never fails: errors come back as
 * {"version": 1, "error": {"code", "field", "message"}}. req may be NULL
 * when len is 0.
 */
char *orrery_call(const char *req, size_t len, size_t *out_len);

/* orrery_free releases a response of orrery_call. NULL is ignored. */
void orrery_free(void *p);

/*
 * orrery_session_new opens a session with no handles, or returns 0 when
 * 65536 are open. orrery_session_call is orrery_call in session s (an
 * unknown s gets an "invalid_argument" error envelope);
 * orrery_session_free closes s and every handle in it (0 is ignored).
 */
orrery_session orrery_session_new(void);
char *orrery_session_call(orrery_session s, const char *req, size_t len, size_t *out_len);
void orrery_session_free(orrery_session s);

/*
 * orrery_link_search rotates k jobs sharing one link. periods[k] are their
 * iteration times in ticks; demand holds their per-tick demands in units,
 * concatenated (periods[0] values, then periods[1], ...); capacity is the
 * link's capacity in units. fixed is NULL or k shifts (-1 for a job the
 * search may move); options is NULL for the defaults. On success it writes
 * each job's shift (ticks, in [0, period)) into shifts[k] and fills result;
 * on an error it writes the reason into result->message.
 */
int32_t orrery_link_search(int32_t k, const int32_t *periods, const int32_t *demand, int32_t capacity,
                           const int32_t *fixed, const orrery_link_options *options, int32_t *shifts,
                           orrery_link_result *result);

#endif /* ORRERY_BUILDING_LIBRARY */

#ifdef __cplusplus
}
#endif

#ifndef __cplusplus
_Static_assert(sizeof(orrery_link_options) == 32, "orrery_link_options is 32 bytes");
_Static_assert(sizeof(orrery_link_result) == 256, "orrery_link_result is 256 bytes");
#endif

#endif /* ORRERY_H */
