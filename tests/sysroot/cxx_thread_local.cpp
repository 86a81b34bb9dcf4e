// requires: threads
// flags: -pthread
/* cxx_thread_local: thread_local objects with constructors and destructors: each thread gets
 * its own, constructed on first use, destroyed when the thread exits (before join returns). */
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

static std::mutex records_lock;
static std::vector<std::string> records;

static void record(const std::string &s)
{
	std::lock_guard<std::mutex> lock(records_lock);
	records.push_back(s);
}

static thread_local int current_id = -1;  /* trivial: no constructor involved */

struct per_thread {
	std::string owner = "unset";
	int uses = 0;
	per_thread() { record("thread " + std::to_string(current_id) + " constructed"); }
	~per_thread()
	{
		if (owner == "main")  /* at exit: print directly, records are no longer read */
			std::printf("main's thread_local destroyed at exit after %d uses\n", uses);
		else
			record(owner + " destroyed after " + std::to_string(uses) + " uses");
	}
};

static thread_local per_thread state;

static int counter()
{
	static thread_local int calls = 0;  /* function-local, trivially initialised */
	return ++calls;
}

static void worker(int id, int uses)
{
	current_id = id;
	if (uses == 0)
		return;  /* never touches `state`: must not construct one */
	state.owner = "thread " + std::to_string(id);
	for (int i = 0; i < uses; i++) {
		state.uses++;
		counter();
	}
	record(state.owner + " saw counter " + std::to_string(counter()));
}

int main()
{
	std::vector<std::thread> threads;
	for (int id = 0; id < 4; id++)
		threads.emplace_back(worker, id, id * 10);  /* thread 0 does not use its thread_local */
	for (auto &t : threads)
		t.join();
	std::sort(records.begin(), records.end());
	for (const auto &r : records)
		std::printf("%s\n", r.c_str());
	size_t constructed = std::count_if(records.begin(), records.end(), [](const std::string &r) {
		return r.find("constructed") != std::string::npos;
	});
	std::printf("constructed in threads: %zu\n", constructed);

	records.clear();
	std::thread([] { worker(9, 3); }).join();
	std::printf("after one more join: %zu records, last: %s\n", records.size(), records.back().c_str());

	state.owner = "main";
	state.uses = 5;
	int first = counter();
	int second = counter();
	std::printf("main counter: %d %d\n", first, second);
	return 0;
}
