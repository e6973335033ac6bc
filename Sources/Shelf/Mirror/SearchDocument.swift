import Foundation
import ShelfCore
import ShelfDatabase

/// A track's row in the search index: the token text (`SearchText`) of each searched field.
///
/// A value that only repeats another column's tokens is left out: an album artist equal to the
/// artist, a sort tag that reads like its display value. Most tracks have both, so this keeps
/// the index small, and it keeps bm25 from counting one name twice.
struct SearchDocument: Equatable {
    /// The index's columns, in order.
    static let columns = [
        "title_words", "artist_words", "album_words", "album_artist_words", "composer_words", "genre_words",
        "title_reading", "artist_reading", "other_reading", "credit_words",
    ]
    /// bm25 weights per column: title and artist (and their readings) above the rest.
    static let weights: [Double] = [10, 8, 3, 3, 2, 1, 10, 8, 2, 2]
    /// The columns of each rank tier when a search has too many hits to score each (see
    /// `MirrorSearch`): title first, then artist, then everything else.
    static let tierColumns: [[String]] = [["title_words", "title_reading"], ["artist_words", "artist_reading"]]

    /// Each column's tokens.
    var fields: [[String]]

    init(
        title: String?, artist: String?, album: String?, albumArtist: String?, composer: String?, genre: String?,
        sortTitle: String?, sortArtist: String?, sortAlbum: String?, sortAlbumArtist: String?, sortComposer: String?,
        details: TrackDetails = TrackDetails()
    ) {
        let title = SearchText.tokens(title)
        let artist = SearchText.tokens(artist)
        let album = SearchText.tokens(album)
        var albumArtist = SearchText.tokens(albumArtist)
        let composer = SearchText.tokens(composer)
        func reading(_ tag: String?, of display: [String]) -> [String] {
            let tokens = SearchText.tokens(tag)
            return tokens == display ? [] : tokens
        }
        let sortArtistTokens = reading(sortArtist, of: artist)
        var sortAlbumArtistTokens = reading(sortAlbumArtist, of: albumArtist)
        if sortAlbumArtistTokens == sortArtistTokens || sortAlbumArtistTokens == artist { sortAlbumArtistTokens = [] }
        if albumArtist == artist { albumArtist = [] }
        fields = [
            title, artist, album, albumArtist, composer, SearchText.tokens(genre),
            reading(sortTitle, of: title),
            sortArtistTokens + sortAlbumArtistTokens,
            reading(sortAlbum, of: album) + reading(sortComposer, of: composer),
            Self.creditTokens(details, beyond: Set(artist + albumArtist + composer)),
        ]
    }

    /// The tokens of what the details credit beyond the display columns: every listed artist,
    /// album artist and composer, each contributor, the labels and catalogue numbers; each once.
    static func creditTokens(_ details: TrackDetails, beyond shown: Set<String>) -> [String] {
        var seen = shown
        var tokens: [String] = []
        let values =
            details.artists + details.albumArtists + details.composers + details.contributors.map(\.name) + details.labels
            + details.catalogNumbers
        for value in values {
            for token in SearchText.tokens(value) where seen.insert(token).inserted { tokens.append(token) }
        }
        return tokens
    }

    init(_ t: Track) {
        self.init(
            title: t.title, artist: t.artist, album: t.album, albumArtist: t.albumArtist, composer: t.composer, genre: t.genre,
            sortTitle: t.sortTitle, sortArtist: t.sortArtist, sortAlbum: t.sortAlbum, sortAlbumArtist: t.sortAlbumArtist,
            sortComposer: t.sortComposer, details: t.details)
    }

    /// The document of a mirror row's stored values (`MirrorRow.columns` order), which hold every
    /// source text: how catch-up removes the row a track had before a change it did not see.
    init(mirrorValues value: (String) -> String?) {
        self.init(
            title: value("title"), artist: value("artist"), album: value("album"), albumArtist: value("album_artist"),
            composer: value("composer"), genre: value("genre"), sortTitle: value("sort_title"), sortArtist: value("sort_artist"),
            sortAlbum: value("sort_album"), sortAlbumArtist: value("sort_album_artist"), sortComposer: value("sort_composer"),
            details: TrackDetails(encoded: value("details")))
    }

    /// True when no column has a token: such a track has no index row at all.
    var isEmpty: Bool { fields.allSatisfy(\.isEmpty) }

    /// Each column's text as the index stores it.
    var texts: [String] { fields.map { $0.joined(separator: " ") } }

    /// Whether every word of `query` occurs in one of `columns` (all columns when nil).
    func matches(_ query: SearchQuery, in columns: [Int]? = nil) -> Bool {
        let columns = columns ?? Array(fields.indices)
        return query.words.indices.allSatisfy { word in columns.contains { query.phrase(word, occursIn: fields[$0]) } }
    }

    /// The rank tier of a matching document: 0 when every word is in the title columns, 1 in the
    /// artist columns, else 2.
    func tier(_ query: SearchQuery) -> Int {
        for (tier, names) in Self.tierColumns.enumerated() where matches(query, in: names.compactMap(Self.columns.firstIndex)) {
            return tier
        }
        return 2
    }

    static let insertSQL =
        "INSERT INTO mirror_search (rowid, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))"
    static let deleteSQL =
        "INSERT INTO mirror_search (mirror_search, rowid, \(columns.joined(separator: ", "))) VALUES ('delete', ?\(String(repeating: ", ?", count: columns.count)))"

    private func arguments(_ id: TrackID) -> [(any SQLiteBindable)?] {
        [id.rawValue] + texts.map { $0 as (any SQLiteBindable)? }
    }

    /// Adds a track's row to the index.
    func insert(id: TrackID, into db: Connection) throws {
        guard !isEmpty else { return }
        let statement = try db.cachedStatement(Self.insertSQL)
        try statement.bind(arguments(id))
        try statement.run()
    }

    /// Removes a track's row, given exactly the tokens it was added with (a contentless index
    /// cannot look them up itself).
    func delete(id: TrackID, from db: Connection) throws {
        guard !isEmpty else { return }
        let statement = try db.cachedStatement(Self.deleteSQL)
        try statement.bind(arguments(id))
        try statement.run()
    }

    /// Moves a track's row from `old` to `new` tokens; nothing when they are equal.
    static func replace(_ old: SearchDocument?, with new: SearchDocument?, id: TrackID, in db: Connection) throws {
        guard old != new else { return }
        try old?.delete(id: id, from: db)
        try new?.insert(id: id, into: db)
    }
}
