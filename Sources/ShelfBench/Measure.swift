import Foundation

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
