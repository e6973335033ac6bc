import Foundation
import ShelfTestSupport

/// Timing helpers: warm-up, then repeated runs, reporting the median (the machine is noisy).
/// What is measured is shown through `Report`.
enum Measure {
    /// Runs `body` `warmup` times untimed, then `runs` times; returns the median in milliseconds.
    static func median(runs: Int, warmup: Int = 2, _ body: () async throws -> Void) async rethrows -> Double {
        for _ in 0..<warmup { try await body() }
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try await body()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}

/// A probe subcommand of this executable (`import-probe`, `scan-probe`) run as a fresh process:
/// its JSON answer (the last line of its output), so each measurement starts cold.
enum ProbeChild {
    static func run(_ arguments: [String]) throws -> [String: Any] {
        let result = try ChildProcess.run(URL(fileURLWithPath: CommandLine.arguments[0]), arguments)
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last,
            let values = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw BenchUsageError(message: "\(arguments.first ?? "probe") failed: \(result.stderr.suffix(2000))") }
        return values
    }
}

/// What a process has used, read from the kernel: for the import and rescan benchmarks, which
/// report reads from the disk and CPU time per file beside the wall clock.
enum ProcessUse {
    /// Bytes this process has made the kernel read from storage (`read_bytes` of /proc/self/io):
    /// what a cold cache costs, not what came from the page cache.
    static func readBytes() -> Int? {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
            let line = io.split(separator: "\n").first(where: { $0.hasPrefix("read_bytes:") })
        else { return nil }
        return Int(line.split(separator: " ").last ?? "")
    }

    /// User and system CPU seconds of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Writes dirty pages out and empties the page cache, so that the next run reads from the
    /// disk; false when this process may not (only root may), which the caller reports.
    static func dropPageCache() -> Bool {
        sync()
        guard let handle = FileHandle(forWritingAtPath: "/proc/sys/vm/drop_caches") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("3\n".utf8))
            return true
        } catch {
            return false
        }
    }
}
