// requires: threads
// flags: -pthread
/* cxx_threads: std::thread, a mutex + condition_variable bounded queue with several producers
 * and consumers, std::async, std::promise, std::packaged_task and std::call_once. */
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

class bounded_queue {
	std::mutex m;
	std::condition_variable not_empty, not_full;
	std::deque<long> items;
	size_t capacity;
	bool closed = false;

public:
	explicit bounded_queue(size_t cap) : capacity(cap) {}
	void push(long v)
	{
		std::unique_lock<std::mutex> lock(m);
		not_full.wait(lock, [&] { return items.size() < capacity; });
		items.push_back(v);
		not_empty.notify_one();
	}
	bool pop(long &v)  /* false once closed and drained */
	{
		std::unique_lock<std::mutex> lock(m);
		not_empty.wait(lock, [&] { return !items.empty() || closed; });
		if (items.empty())
			return false;
		v = items.front();
		items.pop_front();
		not_full.notify_one();
		return true;
	}
	void close()
	{
		std::lock_guard<std::mutex> lock(m);
		closed = true;
		not_empty.notify_all();
	}
};

int main()
{
	/* 3 producers push 1..2000 each (offset by id), 3 consumers sum what they pop */
	bounded_queue q(8);
	std::vector<long> sums(3, 0), counts(3, 0);
	std::vector<std::thread> producers, consumers;
	for (int c = 0; c < 3; c++)
		consumers.emplace_back([&, c] {
			long v;
			while (q.pop(v)) {
				sums[c] += v;
				counts[c]++;
			}
		});
	for (int p = 0; p < 3; p++)
		producers.emplace_back([&, p] {
			for (long i = 1; i <= 2000; i++)
				q.push(i + p * 10000L);
		});
	for (auto &t : producers)
		t.join();
	q.close();
	for (auto &t : consumers)
		t.join();
	std::printf("queue: %ld items, sum %ld\n", std::accumulate(counts.begin(), counts.end(), 0L),
	            std::accumulate(sums.begin(), sums.end(), 0L));

	/* std::async: partial sums of 1..1000000 in four tasks */
	std::vector<std::future<long long>> parts;
	for (int k = 0; k < 4; k++)
		parts.push_back(std::async(std::launch::async, [k] {
			long long s = 0;
			for (long long i = k * 250000LL + 1; i <= (k + 1) * 250000LL; i++)
				s += i;
			return s;
		}));
	long long total = 0;
	for (auto &f : parts)
		total += f.get();
	std::printf("async: sum 1..1000000 = %lld\n", total);

	/* an exception travels through a future */
	auto failing = std::async(std::launch::async, []() -> int { throw std::runtime_error("task failed"); });
	try {
		failing.get();
		std::printf("WRONG: no exception\n");
	} catch (const std::runtime_error &e) {
		std::printf("async exception: %s\n", e.what());
	}

	std::promise<std::string> promise;
	std::future<std::string> fut = promise.get_future();
	std::thread setter([&promise] { promise.set_value("value from promise"); });
	std::printf("promise: %s\n", fut.get().c_str());
	setter.join();

	std::packaged_task<int(int, int)> task([](int a, int b) { return a * b; });
	std::future<int> product = task.get_future();
	std::thread runner(std::move(task), 6, 7);
	runner.join();
	std::printf("packaged_task: %d\n", product.get());

	std::once_flag once;
	int calls = 0;
	std::vector<std::thread> racers;
	for (int i = 0; i < 8; i++)
		racers.emplace_back([&] { std::call_once(once, [&] { calls++; }); });
	for (auto &t : racers)
		t.join();
	std::printf("call_once from 8 threads: %d call\n", calls);
	std::printf("hardware_concurrency > 0: %s\n", std::thread::hardware_concurrency() > 0 ? "yes" : "no");
	return 0;
}
