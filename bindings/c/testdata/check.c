/*
 * check.c drives liborrery through orrery.h for bindings/c's tests.
 *
 *   check call FILE     print the response envelope to FILE's request
 *   check search        run orrery_link_search cases; print "ok" or fail
 *   check threads FILE  call FILE's request from 4 threads; print "ok" if all agree
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery.h"

static char *slurp(const char *path, size_t *n) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t r;
	while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	*n = len;
	return buf;
}

#define CHECK(cond, ...)                        \
	do {                                        \
		if (!(cond)) {                          \
			fprintf(stderr, "check.c:%d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);       \
			fprintf(stderr, "\n");              \
			exit(1);                            \
		}                                       \
	} while (0)

static int search(void) {
	/* Two jobs of period 8 ticks, 3 ticks at 40 units, on a 50-unit link:
	 * delaying the second by 3 interleaves them (score 1). */
	const int32_t periods[2] = {8, 8};
	const int32_t demand[16] = {40, 40, 40, 0, 0, 0, 0, 0, 40, 40, 40, 0, 0, 0, 0, 0};
	int32_t shifts[2] = {-7, -7};
	orrery_link_result res;
	int32_t code = orrery_link_search(2, periods, demand, 50, NULL, NULL, shifts, &res);
	CHECK(code == ORRERY_OK, "code %d: %s", code, res.message);
	CHECK(shifts[0] == 0 && shifts[1] == 3, "shifts %d %d", shifts[0], shifts[1]);
	CHECK(res.status == 0 && res.points == 8 && res.perimeter == 8 && res.grid == 1, "result %d %d %d %d",
	      res.status, res.points, res.perimeter, res.grid);
	CHECK(res.score == 1.0 && res.bound == 1.0 && res.excess == 0, "score %g bound %g excess %lld", res.score,
	      res.bound, (long long)res.excess);
	CHECK(res.unshifted == 1.0 - 3.0 * 30.0 / (8.0 * 50.0), "unshifted %g", res.unshifted);

	/* Paper mode and a fixed second job. */
	orrery_link_options opt;
	memset(&opt, 0, sizeof opt);
	opt.mode = 1;
	const int32_t fixed[2] = {-1, 2};
	code = orrery_link_search(2, periods, demand, 50, fixed, &opt, shifts, &res);
	CHECK(code == ORRERY_OK, "paper: code %d: %s", code, res.message);
	CHECK(res.points == 72 && shifts[1] == 2, "paper: points %d shift %d", res.points, shifts[1]);

	/* Errors: each code with a message. */
	code = orrery_link_search(2, periods, demand, 0, NULL, NULL, shifts, &res);
	CHECK(code == ORRERY_INVALID_ARGUMENT && strstr(res.message, "capacity"), "zero capacity: %d %s", code,
	      res.message);
	/* 6, 10 and 15 share lcm(2, 3, 5) = 30 residues: past a cap of 20. */
	const int32_t shared[3] = {6, 10, 15};
	int32_t *big = calloc(6 + 10 + 15, sizeof(int32_t));
	orrery_link_options capped;
	memset(&capped, 0, sizeof capped);
	capped.max_perimeter = 20;
	code = orrery_link_search(3, shared, big, 50, NULL, &capped, shifts, &res);
	CHECK(code == ORRERY_LIMIT_EXCEEDED && strstr(res.message, "perimeter"), "perimeter: %d %s", code,
	      res.message);
	free(big);
	CHECK(orrery_link_search(2, NULL, demand, 50, NULL, NULL, shifts, &res) == ORRERY_BAD_POINTER, "NULL periods");
	CHECK(orrery_link_search(2, periods, NULL, 50, NULL, NULL, shifts, &res) == ORRERY_BAD_POINTER, "NULL demand");
	CHECK(orrery_link_search(2, periods, demand, 50, NULL, NULL, NULL, &res) == ORRERY_BAD_POINTER, "NULL shifts");
	CHECK(orrery_link_search(2, periods, demand, 50, NULL, NULL, shifts, NULL) == ORRERY_BAD_POINTER, "NULL result");
	CHECK(orrery_link_search(-1, periods, demand, 50, NULL, NULL, shifts, &res) == ORRERY_BAD_POINTER, "k < 0");
	code = orrery_link_search(0, NULL, NULL, 50, NULL, NULL, NULL, &res);
	CHECK(code == ORRERY_INVALID_ARGUMENT && strstr(res.message, "no jobs"), "k = 0: %d %s", code, res.message);

	/* orrery_call's edge cases. */
	size_t n = 99;
	char *out = orrery_call(NULL, 0, &n);
	CHECK(out && strlen(out) == n && strstr(out, "empty request"), "empty: %s", out);
	orrery_free(out);
	out = orrery_call("{}", SIZE_MAX, &n);
	CHECK(out && strstr(out, "limit_exceeded") && strstr(out, "18446744073709551615"), "SIZE_MAX: %s", out);
	orrery_free(out);
	out = orrery_call(NULL, 5, NULL);
	CHECK(out && strstr(out, "invalid_argument"), "NULL request: %s", out);
	orrery_free(out);
	orrery_free(NULL);
	CHECK(orrery_abi_version() == ORRERY_ABI_VERSION, "abi version %d", orrery_abi_version());
	printf("ok\n");
	return 0;
}

struct job {
	const char *req;
	size_t n;
	char *out;
};

static void *run(void *arg) {
	struct job *j = arg;
	for (int i = 0; i < 20; i++) {
		size_t n;
		char *out = orrery_call(j->req, j->n, &n);
		if (j->out && strcmp(out, j->out) != 0) {
			orrery_free(out);
			return "differ";
		}
		if (!j->out) j->out = out;
		else orrery_free(out);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "call") == 0) {
		size_t n, outn;
		char *req = slurp(argv[2], &n);
		char *out = orrery_call(req, n, &outn);
		CHECK(out != NULL, "NULL response");
		fwrite(out, 1, outn, stdout);
		orrery_free(out);
		free(req);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "session") == 0) {
		/* One envelope per line, in a session of their own; the answers
		 * joined by newlines. A second session must not see the first's
		 * handles. */
		size_t n;
		char *req = slurp(argv[2], &n);
		orrery_session s = orrery_session_new(), other = orrery_session_new();
		CHECK(s != 0 && other != 0 && s != other, "orrery_session_new");
		const char *close1 = "{\"op\":\"shockwave.scheduler.close\",\"request\":{\"handle\":1}}";
		int first = 1;
		for (char *line = req; line < req + n;) {
			char *end = memchr(line, '\n', (size_t)(req + n - line));
			if (!end) end = req + n;
			if (end > line) {
				size_t outn;
				char *out = orrery_session_call(s, line, (size_t)(end - line), &outn);
				CHECK(out != NULL, "NULL response");
				if (!first) fputc('\n', stdout);
				fwrite(out, 1, outn, stdout);
				orrery_free(out);
				first = 0;
			}
			line = end + 1;
		}
		char *out = orrery_session_call(other, close1, strlen(close1), NULL);
		CHECK(strstr(out, "\"invalid_argument\"") != NULL, "a fresh session sees handle 1: %s", out);
		orrery_free(out);
		orrery_session_free(s);
		orrery_session_free(other);
		out = orrery_session_call(s, close1, strlen(close1), NULL);
		CHECK(strstr(out, "abi: the session is not open") != NULL, "a freed session answers: %s", out);
		orrery_free(out);
		free(req);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "search") == 0) return search();
	if (argc == 3 && strcmp(argv[1], "threads") == 0) {
		size_t n;
		char *req = slurp(argv[2], &n);
		pthread_t t[4];
		struct job jobs[4];
		for (int i = 0; i < 4; i++) {
			jobs[i] = (struct job){req, n, NULL};
			pthread_create(&t[i], NULL, run, &jobs[i]);
		}
		for (int i = 0; i < 4; i++) {
			void *r;
			pthread_join(t[i], &r);
			CHECK(r == NULL, "thread %d: %s", i, (char *)r);
			CHECK(strcmp(jobs[i].out, jobs[0].out) == 0, "threads disagree");
		}
		printf("ok\n");
		return 0;
	}
	fprintf(stderr, "usage: check call FILE | check session FILE | check search | check threads FILE\n");
	return 2;
}
