// check.cc only has to compile and link: orrery.h is usable from C++.
#include "orrery.h"

#include <cstdio>

int main() {
	orrery_link_options opt{};
	orrery_link_result res{};
	const int32_t periods[1] = {4};
	const int32_t demand[4] = {1, 0, 0, 0};
	int32_t shifts[1];
	int32_t code = orrery_link_search(1, periods, demand, 2, nullptr, &opt, shifts, &res);
	std::printf("%d %d\n", orrery_abi_version(), code);
	return code;
}
