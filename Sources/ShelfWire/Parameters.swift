import Foundation
import Shelf
import ShelfCore

/// The parameter languages shared by flags and query parameters (`--sort year:desc` is
/// `?sort=year:desc`), parsed in one place so both accept exactly the same values.
public enum Parameters {
    /// Parses the filter language; a mistake names its position.
    public static func filter(_ text: String) throws(WireInputError) -> Filter {
        do {
            return try FilterParser.parse(text)
        } catch {
            throw WireInputError("filter: \(error)")
        }
    }

    /// A cursor printed with an earlier page.
    public static func cursor(_ text: String) throws(WireInputError) -> PageCursor {
        guard let cursor = PageCursor(text) else { throw WireInputError("after: '\(text)' is not a cursor from a previous page") }
        return cursor
    }

    /// `on` or `off` (nil: on).
    public static func sortTags(_ text: String?) throws(WireInputError) -> Bool {
        switch text {
        case nil, "on": true
        case "off": false
        case let other?: throw WireInputError("sort-tags expects on or off, got '\(other)'")
        }
    }

    /// Parses `FIELD[:asc|:desc]` with a sort-tag switch and a filter into a query.
    public static func query(sort text: String, sortTags: String?, filter: Filter) throws(WireInputError) -> LibraryQuery {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let fieldName = parts.first, let field = SortField(rawValue: fieldName) else {
            throw WireInputError("sort: unknown field '\(text)'; one of: \(SortField.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var descending = false
        if parts.count == 2 {
            switch parts[1] {
            case "desc": descending = true
            case "asc": descending = false
            default: throw WireInputError("sort: the direction must be asc or desc, got '\(parts[1])'")
            }
        }
        return LibraryQuery(sort: field, descending: descending, useSortTags: try Self.sortTags(sortTags), filter: filter)
    }

    /// A view query: `kind` (with `by` artist|albumArtist for artists), `sort` name[:desc], the
    /// sort-tag switch, and for albums an artist to drill down from.
    public static func groupQuery(
        kind: GroupKind, by: String?, sort: String?, sortTags: String?, artist: String?
    ) throws(WireInputError) -> GroupQuery {
        var kind = kind
        if kind == .artist, let by {
            switch by {
            case "artist": kind = .artist
            case "albumArtist": kind = .albumArtist
            default: throw WireInputError("by expects artist or albumArtist, got '\(by)'")
            }
        }
        var artistID: GroupID?
        if kind == .album, let artist {
            guard let id = Int64(artist), id > 0 else { throw WireInputError("artist expects an artist ID, got '\(artist)'") }
            artistID = GroupID(id)
        }
        let descending: Bool
        switch sort ?? "name" {
        case "name", "name:asc": descending = false
        case "name:desc": descending = true
        case let other: throw WireInputError("sort: views sort by name[:desc], got '\(other)'")
        }
        return GroupQuery(kind: kind, useSortTags: try Self.sortTags(sortTags), descending: descending, artist: artistID)
    }

    /// A positive ID.
    public static func id(_ text: String, what: String) throws(WireInputError) -> Int64 {
        guard let value = Int64(text), value > 0 else { throw WireInputError("'\(text)' is not a \(what) ID (a positive integer)") }
        return value
    }
}

extension Parameters {
    /// A smart playlist's size limit: items (25), minutes (90m), hours (2h), MB or GB.
    public static func smartLimit(_ text: String) throws(WireInputError) -> SmartLimit {
        let lower = text.lowercased()
        func number(_ suffix: String) -> Double? { lower.hasSuffix(suffix) ? Double(lower.dropLast(suffix.count)) : nil }
        if let items = Int(lower), items > 0 { return .items(items) }
        if let minutes = number("m"), minutes > 0 { return .duration(minutes * 60) }
        if let hours = number("h"), hours > 0 { return .duration(hours * 3_600) }
        if let megabytes = number("mb"), megabytes > 0 { return .size(Int64(megabytes * 1_000_000)) }
        if let gigabytes = number("gb"), gigabytes > 0 { return .size(Int64(gigabytes * 1_000_000_000)) }
        throw WireInputError("limit expects items (25), minutes (90m), hours (2h), MB or GB, got '\(text)'")
    }
}
