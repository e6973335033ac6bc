import Foundation
import ShelfCore
import ShelfDatabase

/// Bookmarks, internet radio stations and shares, written inside a `library.write` batch.
extension WriteBatch {
    // MARK: Bookmarks

    /// Saves `user`'s bookmark in `track` (one per user and track: saving again moves it and
    /// keeps its creation time).
    public func saveBookmark(of user: UserID, track: TrackID, position: Int, comment: String) throws {
        _ = try requireUser(user)
        try requireTrack(track)
        guard position >= 0 else { throw LibraryError.invalidValue(field: "position", value: "\(position)", reason: "a position is 0 or more milliseconds") }
        try SavedRows.checkText(comment, field: "comment", limit: 4_096)
        try db.execute(
            """
            INSERT INTO bookmark (user_id, track_id, position, comment, created, changed) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
            ON CONFLICT (user_id, track_id) DO UPDATE SET position = excluded.position, comment = excluded.comment, changed = excluded.changed
            """, [user.rawValue, track.rawValue, Int64(position), comment, now])
    }

    /// Deletes `user`'s bookmark in `track`; there must be one.
    public func deleteBookmark(of user: UserID, track: TrackID) throws {
        try db.execute("DELETE FROM bookmark WHERE user_id = ? AND track_id = ?", [user.rawValue, track.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "bookmark", id: "of track \(track)") }
    }

    // MARK: Internet radio

    /// Adds a station; both addresses must be `http` or `https` URLs.
    @discardableResult
    public func addRadioStation(name: String, streamURL: String, homePageURL: String?) throws -> RadioStation {
        try SavedRows.checkStation(name: name, streamURL: streamURL, homePageURL: homePageURL)
        try db.execute(
            "INSERT INTO radio_station (name, stream_url, home_page_url, created) VALUES (?, ?, ?, ?)",
            [name, streamURL, homePageURL.flatMap { $0.isEmpty ? nil : $0 }, now])
        let id = SavedID(db.lastInsertRowID)
        guard let station = try db.queryOne(SavedRows.selectStation + " WHERE id = ?", [id.rawValue], SavedRows.decodeStation) else {
            throw LibraryError.objectNotFound(kind: "station", id: "\(id)")
        }
        return station
    }

    /// Replaces a station's name and addresses.
    public func updateRadioStation(_ id: SavedID, name: String, streamURL: String, homePageURL: String?) throws {
        try SavedRows.checkStation(name: name, streamURL: streamURL, homePageURL: homePageURL)
        try db.execute(
            "UPDATE radio_station SET name = ?, stream_url = ?, home_page_url = ? WHERE id = ?",
            [name, streamURL, homePageURL.flatMap { $0.isEmpty ? nil : $0 }, id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "station", id: "\(id)") }
    }

    /// Deletes a station.
    public func deleteRadioStation(_ id: SavedID) throws {
        try db.execute("DELETE FROM radio_station WHERE id = ?", [id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "station", id: "\(id)") }
    }

    // MARK: Shares

    /// Creates a share of `tracks` (in order, at least one, each existing) by `user`, with a fresh
    /// 128-bit token; `expires`, when given, must be after now.
    @discardableResult
    public func createShare(by user: UserID, tracks: [TrackID], description: String, expires: Date?) throws -> Share {
        _ = try requireUser(user)
        guard !tracks.isEmpty else { throw LibraryError.invalidValue(field: "id", value: "", reason: "a share needs at least one track") }
        guard tracks.count <= 10_000 else {
            throw LibraryError.invalidValue(field: "id", value: "\(tracks.count) tracks", reason: "a share holds at most 10000 tracks")
        }
        for track in Set(tracks) { try requireTrack(track) }
        try SavedRows.checkText(description, field: "description", limit: 1_024)
        if let expires, expires <= now {
            throw LibraryError.invalidValue(field: "expires", value: "\(expires)", reason: "a share's expiry must be in the future")
        }
        let token = Secrets.base64url(Secrets.randomBytes(16))
        try db.execute(
            "INSERT INTO share (token, user_id, description, created, expires) VALUES (?, ?, ?, ?, ?)",
            [token, user.rawValue, description, now, expires])
        let id = SavedID(db.lastInsertRowID)
        for (index, track) in tracks.enumerated() {
            try db.execute("INSERT INTO share_item (share_id, position, track_id) VALUES (?, ?, ?)", [id.rawValue, Int64(index), track.rawValue])
        }
        return Share(
            id: id, token: token, user: user, description: description, created: now, expires: expires,
            lastVisited: nil, visitCount: 0, tracks: tracks)
    }

    /// Changes a share's description and expiry (`expires` nil: never expires).
    public func updateShare(_ id: SavedID, description: String?, expires: Date??) throws {
        guard try db.scalar(Int.self, "SELECT 1 FROM share WHERE id = ?", [id.rawValue]) != nil else {
            throw LibraryError.objectNotFound(kind: "share", id: "\(id)")
        }
        if let description {
            try SavedRows.checkText(description, field: "description", limit: 1_024)
            try db.execute("UPDATE share SET description = ? WHERE id = ?", [description, id.rawValue])
        }
        if let expires { try db.execute("UPDATE share SET expires = ? WHERE id = ?", [expires, id.rawValue]) }
    }

    /// Deletes a share: its link stops working with this commit.
    public func deleteShare(_ id: SavedID) throws {
        try db.execute("DELETE FROM share WHERE id = ?", [id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "share", id: "\(id)") }
    }

    /// Counts one visit of a share's page.
    public func recordShareVisit(_ id: SavedID) throws {
        try db.execute("UPDATE share SET visit_count = visit_count + 1, last_visited = ? WHERE id = ?", [now, id.rawValue])
    }
}

/// How saved rows are read and what their values must be.
enum SavedRows {
    static let selectStation = "SELECT id, name, stream_url, home_page_url, created FROM radio_station"
    static let selectShare = "SELECT id, token, user_id, description, created, expires, last_visited, visit_count FROM share"

    static func decodeStation(_ row: Row) throws -> RadioStation {
        RadioStation(
            id: SavedID(try row.int64(0)), name: try row.string(1), streamURL: try row.string(2),
            homePageURL: row.optionalString(3), created: try row.get(4))
    }

    static func decodeShare(_ row: Row) throws -> Share {
        Share(
            id: SavedID(try row.int64(0)), token: try row.string(1), user: UserID(try row.int64(2)), description: try row.string(3),
            created: try row.get(4), expires: try row.get(5), lastVisited: try row.get(6), visitCount: Int(try row.int64(7)), tracks: [])
    }

    /// Free text shown to people: bounded, and without control characters but line breaks.
    static func checkText(_ text: String, field: String, limit: Int) throws {
        guard text.utf8.count <= limit else {
            throw LibraryError.invalidValue(field: field, value: "\(text.utf8.count) bytes", reason: "at most \(limit) bytes")
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            throw LibraryError.invalidValue(field: field, value: text.debugDescription, reason: "must not contain control characters")
        }
    }

    static func checkStation(name: String, streamURL: String, homePageURL: String?) throws {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw LibraryError.invalidValue(field: "name", value: name, reason: "a station needs a name")
        }
        try checkText(name, field: "name", limit: 256)
        try checkWebURL(streamURL, field: "streamUrl")
        if let homePageURL, !homePageURL.isEmpty { try checkWebURL(homePageURL, field: "homepageUrl") }
    }

    /// An absolute `http` or `https` URL with a host, of at most 2,048 bytes.
    static func checkWebURL(_ text: String, field: String) throws {
        guard text.utf8.count <= 2_048, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw LibraryError.invalidValue(field: field, value: text, reason: "an http or https URL of at most 2048 bytes")
        }
    }
}
