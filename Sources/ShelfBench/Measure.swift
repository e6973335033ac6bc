import Foundation

/// Timing helpers: warm-up, then repeated runs, reporting the median (the machine is noisy).
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

    /// Prints a Markdown table.
    static func table(_ header: [String], _ rows: [[String]]) {
        print("| " + header.joined(separator: " | ") + " |")
        print("|" + header.map { _ in "---:" }.joined(separator: "|") + "|")
        for row in rows { print("| " + row.joined(separator: " | ") + " |") }
    }

    /// Prints one JSON line.
    static func jsonLine<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func ms(_ value: Double) -> String { String(format: "%.3f", value) }
}
