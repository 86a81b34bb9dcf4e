// requires: threads
// flags: -pthread -latomic
/* cxx_atomic: std::atomic on 1, 2, 4, 8 and 16-byte types from several threads: fetch_add on
 * integers, compare-exchange loops on 8 and 16-byte structs (16 bytes needs libatomic on
 * some targets). */
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

struct pair32 {
	uint32_t lo, hi;
};
struct pair64 {
	uint64_t a, b;
};

static std::atomic<uint8_t> a8{0};
static std::atomic<uint16_t> a16{0};
static std::atomic<uint32_t> a32{0};
static std::atomic<uint64_t> a64{0};
static std::atomic<pair32> p32{pair32{0, 0}};
static std::atomic<pair64> p64{pair64{0, 0}};
static std::atomic<bool> start{false};

constexpr int threads = 4;
constexpr int iters = 20000;

static void work()
{
	while (!start.load(std::memory_order_acquire))
		std::this_thread::yield();
	for (int i = 0; i < iters; i++) {
		a8.fetch_add(1);
		a16.fetch_add(1, std::memory_order_relaxed);
		a32 += 3;
		a64.fetch_add(0x100000001ull);
		pair32 o = p32.load();
		while (!p32.compare_exchange_weak(o, pair32{o.lo + 1, o.hi + 2}))
			;
		/* both halves of the 16-byte value must change together */
		pair64 old = p64.load();
		pair64 next;
		do {
			next = pair64{old.a + 1, old.b + 0x100000000ull};
		} while (!p64.compare_exchange_weak(old, next));
	}
}

int main()
{
	std::vector<std::thread> ts;
	for (int i = 0; i < threads; i++)
		ts.emplace_back(work);
	start.store(true, std::memory_order_release);
	for (auto &t : ts)
		t.join();
	/* 80000 increments: 80000 % 256 = 128, 80000 % 65536 = 14464 */
	std::printf("uint8_t  fetch_add: %u\n", (unsigned)a8.load());
	std::printf("uint16_t fetch_add: %u\n", (unsigned)a16.load());
	std::printf("uint32_t fetch_add: %u\n", (unsigned)a32.load());
	std::printf("uint64_t fetch_add: 0x%llx\n", (unsigned long long)a64.load());
	pair32 q = p32.load();
	std::printf("8-byte struct cas: lo=%u hi=%u\n", (unsigned)q.lo, (unsigned)q.hi);
	pair64 p = p64.load();
	std::printf("16-byte struct cas: a=%llu b=0x%llx\n", (unsigned long long)p.a, (unsigned long long)p.b);

	/* single-threaded semantics of the 16-byte type */
	pair64 expected{1, 2};
	bool ok = p64.compare_exchange_strong(expected, pair64{3, 4});
	std::printf("16-byte cas with stale expected: ok=%d, expected now a=%llu\n", ok,
	            (unsigned long long)expected.a);
	pair64 prev = p64.exchange(pair64{7, 8});
	pair64 now = p64.load();
	std::printf("16-byte exchange: old a=%llu, new a=%llu b=%llu\n", (unsigned long long)prev.a,
	            (unsigned long long)now.a, (unsigned long long)now.b);
	std::atomic_flag flag = ATOMIC_FLAG_INIT;
	bool first = flag.test_and_set();
	bool second = flag.test_and_set();
	std::printf("atomic_flag: %d %d\n", first, second);
	return 0;
}
