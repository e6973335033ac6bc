import Foundation

/// One condition of a smart playlist: any filter, plus the conditions only a smart playlist has.
public indirect enum SmartCondition: Sendable, Hashable, Codable {
    /// Any filter of the query language.
    case filter(Filter)
    /// A date field within the last `days` days before the moment of evaluation.
    case inLastDays(NumberField, days: Int)
    /// The track is (or is not) in a playlist; a smart playlist counts with its own contents.
    case inPlaylist(PlaylistID)
    case notInPlaylist(PlaylistID)
    /// Every condition holds / any holds / the condition does not hold (groups nest).
    case all([SmartCondition])
    case any([SmartCondition])
    case not(SmartCondition)

    /// Every playlist the condition refers to.
    public var playlists: [PlaylistID] {
        switch self {
        case .filter, .inLastDays: []
        case .inPlaylist(let id), .notInPlaylist(let id): [id]
        case .all(let conditions), .any(let conditions): conditions.flatMap(\.playlists)
        case .not(let condition): condition.playlists
        }
    }
}

/// Which tracks a limited smart playlist keeps, in that order.
public enum SmartSelection: String, Sendable, Hashable, Codable, CaseIterable {
    /// A shuffled order that stays the same between evaluations (a hash of the track and playlist IDs).
    case random
    case mostPlayed, leastPlayed, highestRated, mostRecentlyAdded, mostRecentlyPlayed
}

/// A smart playlist's size limit.
public enum SmartLimit: Sendable, Hashable, Codable {
    case items(Int)
    /// Total seconds: tracks are taken in selection order until the next would pass it.
    case duration(Double)
    /// Total bytes of the files, the same way.
    case size(Int64)
}

/// A smart playlist's stored definition: the condition, and an optional limit with its selection.
public struct SmartRules: Sendable, Hashable, Codable {
    /// Which tracks qualify.
    public var condition: SmartCondition
    /// At most how many (or how long, or how large); nil keeps every qualifying track.
    public var limit: SmartLimit?
    /// The order tracks are taken in under a limit (and the order of the contents); nil: by ID.
    public var selection: SmartSelection?

    /// Rules from a condition, with an optional limit and selection.
    public init(_ condition: SmartCondition, limit: SmartLimit? = nil, selection: SmartSelection? = nil) {
        self.condition = condition
        self.limit = limit
        self.selection = selection
    }

    /// The JSON stored in the playlist row.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// Decodes stored JSON.
    public init(json: String) throws {
        self = try JSONDecoder().decode(SmartRules.self, from: Data(json.utf8))
    }

    /// Parses the command line's rule language: the filter language, plus `playlist:ID` (in a
    /// playlist; `-playlist:ID` not in it) and `FIELD:last:N` (a date field within the last N
    /// days). Terms are all required; ` , ` separates alternatives.
    public static func parseCondition(_ text: String) throws -> SmartCondition {
        var alternatives: [[SmartCondition]] = [[]]
        for term in try FilterParser.tokenize(text) {
            if term.text == "," && !term.quoted {
                guard !(alternatives.last ?? []).isEmpty else { throw FilterParseError(position: term.position, message: "expected a term before ','") }
                alternatives.append([])
                continue
            }
            alternatives[alternatives.count - 1].append(try parseTerm(term))
        }
        if alternatives.count > 1, alternatives.last?.isEmpty == true {
            throw FilterParseError(position: text.count + 1, message: "expected a term after ','")
        }
        let groups = alternatives.map { $0.count == 1 ? $0[0] : SmartCondition.all($0) }
        return groups.count == 1 ? groups[0] : .any(groups)
    }

    static func parseTerm(_ term: FilterParser.Term) throws -> SmartCondition {
        let negated = term.text.hasPrefix("-") && term.text.count > 1
        let body = negated ? String(term.text.dropFirst()) : term.text
        let parts = body.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let valuePosition = term.position + (negated ? 1 : 0) + (parts.first?.count ?? 0) + 1
        if !term.quoted, parts.count == 2, parts[0] == "playlist" {
            guard let id = Int64(parts[1]), id > 0 else { throw FilterParseError(position: valuePosition, message: "expected a playlist ID") }
            return negated ? .notInPlaylist(PlaylistID(id)) : .inPlaylist(PlaylistID(id))
        }
        if !term.quoted, parts.count == 3, parts[1] == "last", let field = NumberField(rawValue: parts[0]) {
            guard [.dateAdded, .dateModified, .lastPlayed].contains(field) else {
                throw FilterParseError(position: term.position, message: "'last' needs a date field (dateAdded, dateModified, lastPlayed)")
            }
            let digits = parts[2].hasSuffix("d") ? String(parts[2].dropLast()) : parts[2]
            guard let days = Int(digits), days > 0 else {
                throw FilterParseError(position: valuePosition + 5, message: "expected a number of days, like 30 or 30d")
            }
            let condition = SmartCondition.inLastDays(field, days: days)
            return negated ? .not(condition) : condition
        }
        return .filter(try FilterParser.parseTerm(term))
    }
}
