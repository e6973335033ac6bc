import Foundation

/// A small, fast, deterministic random generator (SplitMix64): the same seed gives the same
/// catalogue on every machine and every Swift version, which `SystemRandomNumberGenerator` cannot.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// A uniformly chosen element.
    public mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }

    /// A uniform double in `range`.
    public mutating func double(_ range: Range<Double>) -> Double { Double.random(in: range, using: &self) }
}

/// Samples ranks 0..<count with probability proportional to 1/(rank+1)^exponent.
public struct ZipfSampler: Sendable {
    private let cumulative: [Double]

    /// A sampler over `count` ranks.
    public init(count: Int, exponent: Double) {
        var total = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(count)
        for rank in 0..<max(count, 1) {
            total += 1 / pow(Double(rank + 1), exponent)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
    }

    /// One rank.
    public func sample(using random: inout SeededRandom) -> Int {
        let u = random.double(0..<1)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < u { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
