import Foundation

/// What one `shelf-bench` command measured. Commands only feed it figures; `BenchMain` prints it
/// once at the end, as Markdown tables and sentences for people or, with `--json`, as one JSON
/// document. Both are rendered from the same cells, so the two outputs cannot disagree.
struct Report {
    /// One figure, in the unit its JSON key names.
    enum Value {
        case int(Int)
        case number(Double)
        case text(String)
        case flag(Bool)
        /// Not measured: the table says why, the JSON holds null.
        case absent(String)
    }

    /// A table column: its heading for people, its key for programs, and how many decimals people see.
    struct Column {
        let title: String
        let key: String
        let decimals: Int
        let suffix: String

        /// `key` is camelCase with the unit in it (`firstPageMs`); `decimals` only affects the table.
        init(_ title: String, _ key: String, decimals: Int = 0, suffix: String = "") {
            self.title = title
            self.key = key
            self.decimals = decimals
            self.suffix = suffix
        }
    }

    /// A line of prose whose interpolated figures are also top-level keys of the JSON document.
    struct Sentence: ExpressibleByStringInterpolation {
        enum Part {
            case text(String)
            case figure(key: String, value: Value, decimals: Int)
        }

        var parts: [Part]

        /// A sentence without figures.
        init(stringLiteral value: String) { parts = [.text(value)] }

        /// A sentence built by interpolation.
        init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }

        /// Collects the literal text and the `\(figure: key, value)` parts of a sentence.
        struct StringInterpolation: StringInterpolationProtocol {
            var parts: [Part] = []

            init(literalCapacity: Int, interpolationCount: Int) {}

            mutating func appendLiteral(_ literal: String) { parts.append(.text(literal)) }

            /// Plain text, not a figure (a path, a name).
            mutating func appendInterpolation(_ text: String) { parts.append(.text(text)) }

            /// A figure shown with `decimals` decimals and reported under `key`.
            mutating func appendInterpolation(figure key: String, _ value: some ReportValue, decimals: Int = 0) {
                parts.append(.figure(key: key, value: value.reportValue, decimals: decimals))
            }
        }
    }

    private enum Block {
        case table(title: String?, key: String?, columns: [Column], rows: [[Value]])
        case sentence(Sentence)
    }

    /// The command's name, the document's `benchmark`.
    let benchmark: String
    /// The arguments it ran with (without `--json`), so a document says how it was made.
    let arguments: [String]
    private var blocks: [Block] = []

    /// An empty report for `benchmark` run with `arguments`.
    init(benchmark: String, arguments: [String]) {
        self.benchmark = benchmark
        self.arguments = arguments
    }

    /// Adds a table. Its rows become an array of objects under `key`; with `key` nil the table must
    /// have one row, whose figures become top-level keys (a command that measures one thing).
    mutating func table(_ title: String? = nil, key: String?, _ columns: [Column], _ rows: [[any ReportValue]]) {
        let values = rows.map { row in
            precondition(row.count == columns.count, "a row of \(row.count) cells under \(columns.count) columns")
            return row.map(\.reportValue)
        }
        precondition(key != nil || values.count == 1, "a table without a key holds exactly one row")
        blocks.append(.table(title: title, key: key, columns: columns, rows: values))
    }

    /// Adds a line of prose; its figures become top-level keys.
    mutating func sentence(_ sentence: Sentence) { blocks.append(.sentence(sentence)) }

    /// The Markdown tables and sentences, blocks separated by blank lines, then the machine's load.
    func text() -> String {
        var out: [String] = []
        for block in blocks {
            if !out.isEmpty { out.append("") }
            switch block {
            case .sentence(let sentence):
                out.append(
                    sentence.parts.map { part in
                        switch part {
                        case .text(let text): text
                        case .figure(_, let value, let decimals): Self.format(value, decimals: decimals, suffix: "")
                        }
                    }.joined())
            case .table(let title, _, let columns, let rows):
                if let title { out.append(title) }
                out.append("| " + columns.map(\.title).joined(separator: " | ") + " |")
                out.append("|" + columns.map { _ in "---:" }.joined(separator: "|") + "|")
                for row in rows {
                    out.append("| " + zip(columns, row).map { Self.format($1, decimals: $0.decimals, suffix: $0.suffix) }.joined(separator: " | ") + " |")
                }
            }
        }
        if let load = Self.loadAverage() {
            out.append("")
            out.append(
                "Load average at the end (1, 5, 15 min): " + load.map { String(format: "%.2f", $0) }.joined(separator: ", ")
                    + " on \(ProcessInfo.processInfo.activeProcessorCount) cores.")
        }
        return out.joined(separator: "\n")
    }

    /// The JSON document: `benchmark`, `build`, `machine`, `arguments`, every sentence figure and
    /// keyless table cell at the top level, and each keyed table as an array of row objects.
    func jsonObject() -> [String: Any] {
        var document: [String: Any] = [
            "benchmark": benchmark, "build": Self.build, "machine": Self.machine(), "arguments": arguments,
        ]
        func put(_ key: String, _ value: Any) {
            precondition(document[key] == nil, "the report's key '\(key)' is used twice")
            document[key] = value
        }
        for block in blocks {
            switch block {
            case .sentence(let sentence):
                for case .figure(let key, let value, _) in sentence.parts { put(key, Self.json(value)) }
            case .table(_, let key, let columns, let rows):
                let objects = rows.map { row in
                    Dictionary(uniqueKeysWithValues: zip(columns, row).map { ($0.key, Self.json($1)) })
                }
                if let key {
                    put(key, objects)
                } else {
                    for (name, value) in objects[0] { put(name, value) }
                }
            }
        }
        return document
    }

    /// The JSON document as one line of text.
    func json() throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: jsonObject(), options: [.sortedKeys]), as: UTF8.self)
    }

    /// Which build measured: timings from a debug build are not comparable with release ones.
    static var build: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }

    /// What the numbers depend on: cores (other work shares them), memory, processor and system.
    static func machine() -> [String: Any] {
        let info = ProcessInfo.processInfo
        var machine: [String: Any] = [
            "cores": info.activeProcessorCount,
            "memoryMiB": Int(info.physicalMemory / 1_048_576),
            "os": info.operatingSystemVersionString,
        ]
        if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            machine["cpu"] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if let load = loadAverage() { machine["loadAverage"] = load }
        return machine
    }

    /// The 1-, 5- and 15-minute load averages when the report is made: figures from a busy
    /// machine are quoted with its load beside them.
    static func loadAverage() -> [Double]? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        let values = text.split(separator: " ").prefix(3).compactMap { Double($0) }
        return values.count == 3 ? values : nil
    }

    private static func format(_ value: Value, decimals: Int, suffix: String) -> String {
        switch value {
        case .int(let number): "\(number)\(suffix)"
        case .number(let number): number.isFinite ? String(format: "%.\(decimals)f", number) + suffix : "–"
        case .text(let text): text
        case .flag(let flag): flag ? "yes" : "NO"
        case .absent(let reason): reason
        }
    }

    /// JSON has no infinity or NaN (a ratio over a zero time): those become null.
    private static func json(_ value: Value) -> Any {
        switch value {
        case .int(let number): number
        case .number(let number): number.isFinite ? number : NSNull()
        case .text(let text): text
        case .flag(let flag): flag
        case .absent: NSNull()
        }
    }
}

/// A Swift value a report cell can hold; optionals are absent figures.
protocol ReportValue {
    /// The value as a report figure.
    var reportValue: Report.Value { get }
}

extension Report.Value: ReportValue {
    var reportValue: Report.Value { self }
}

extension Int: ReportValue {
    var reportValue: Report.Value { .int(self) }
}

extension Int64: ReportValue {
    var reportValue: Report.Value { .int(Int(self)) }
}

extension Double: ReportValue {
    var reportValue: Report.Value { .number(self) }
}

extension String: ReportValue {
    var reportValue: Report.Value { .text(self) }
}

extension Bool: ReportValue {
    var reportValue: Report.Value { .flag(self) }
}

extension Optional: ReportValue where Wrapped: ReportValue {
    var reportValue: Report.Value { self?.reportValue ?? .absent("–") }
}
