import Foundation

/// A mistake in how the command was called: reported in one line, with the help page to read, and exit status 1.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The words after the command name, consumed by the command's parser: flags with values,
/// switches, and positional words. Anything left over is an error, never silently ignored.
struct Arguments {
    private(set) var words: [String]

    init(_ words: [String]) { self.words = words }

    /// Removes `--name VALUE` (or `--name=VALUE`) and returns VALUE; nil when absent.
    mutating func option(_ name: String) throws -> String? {
        var found: String?
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == name {
                guard index + 1 < words.count else { throw UsageError("\(name) needs a value") }
                found = words[index + 1]
                words.removeSubrange(index...(index + 1))
            } else if word.hasPrefix(name + "=") {
                found = String(word.dropFirst(name.count + 1))
                words.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// Removes the first `--name VALUE` only, for options that may repeat; nil when none is left.
    mutating func firstOption(_ name: String) throws -> String? {
        guard let index = words.firstIndex(where: { $0 == name || $0.hasPrefix(name + "=") }) else { return nil }
        if words[index] == name {
            guard index + 1 < words.count else { throw UsageError("\(name) needs a value") }
            defer { words.removeSubrange(index...(index + 1)) }
            return words[index + 1]
        }
        defer { words.remove(at: index) }
        return String(words[index].dropFirst(name.count + 1))
    }

    /// Removes `--name VALUE` and parses VALUE as an integer within `range`.
    mutating func intOption(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// Removes every occurrence of a switch and says whether there was one.
    mutating func flag(_ name: String) -> Bool {
        let before = words.count
        words.removeAll { $0 == name }
        return words.count != before
    }

    /// Removes and returns the positional words; fails on any leftover `--flag`.
    mutating func positionals() throws -> [String] {
        if let unknown = words.first(where: { $0.hasPrefix("-") && $0.count > 1 && Int($0) == nil }) {
            throw UsageError("unknown option \(unknown)")
        }
        defer { words.removeAll() }
        return words
    }

    /// Fails when anything is left over.
    func finish() throws {
        if let first = words.first {
            throw UsageError(first.hasPrefix("-") ? "unknown option \(first)" : "unexpected argument '\(first)'")
        }
    }
}
