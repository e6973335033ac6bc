extension Array {
    /// Up to `count` distinct elements drawn uniformly at random, in random order: the first
    /// steps of a Fisher–Yates shuffle. Only `count` draws: the system generator makes a
    /// `getrandom` call per draw, so shuffling a whole 40,000-album list cost 20 ms of system calls
    /// to keep 500 of it.
    public func randomSample(_ count: Int) -> [Element] {
        var pool = self
        let picks = Swift.min(Swift.max(count, 0), pool.count)
        var generator = SystemRandomNumberGenerator()
        for index in 0..<picks {
            pool.swapAt(index, Int.random(in: index..<pool.count, using: &generator))
        }
        return Array(pool.prefix(picks))
    }
}
