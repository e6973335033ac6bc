import Foundation
import ShelfCore
import ShelfDatabase

/// Reading other programs' files into `ForeignData`, each as its program writes it. Nothing here
/// writes; a file that is not what it was said to be is `LibraryError.unreadableSource`.
enum ForeignReaders {
    /// Whether a listen's time (Unix seconds) can be one: after 1970 and before the year 10000.
    /// Exports are read as written, and shelf-fuzz found times of ∞ and of the year 2 accepted.
    static func plausible(_ seconds: Double) -> Bool { seconds > 0 && seconds < 253_402_300_800 }

    static func read(_ source: ForeignSource, at url: URL, user: String?) throws -> ForeignData {
        switch source {
        case .navidrome: try NavidromeReader.read(url, only: user)
        case .beets: try BeetsReader.read(url)
        case .itunes: try ITunesReader.read(url)
        case .listenbrainz, .lastfm:
            // Read a chunk at a time by `ListenChunks`; whole here for callers that want it so.
            try ListenExportReader.whole(source, url)
        }
    }

    static func refuse(_ url: URL, _ reason: String) -> LibraryError { .unreadableSource(path: url.path, reason: reason) }

    /// Another program's SQLite file, opened read-only.
    static func openDatabase(_ url: URL, expecting tables: [String], program: String) throws -> Connection {
        guard FileManager.default.fileExists(atPath: url.path) else { throw refuse(url, "there is no such file") }
        let db: Connection
        do {
            db = try Connection(path: url.path, mode: .readOnly)
            let present = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'", []) { try $0.string(0) })
            let missing = tables.filter { !present.contains($0) }
            guard missing.isEmpty else { throw refuse(url, "it is not \(program)'s database (no \(missing.joined(separator: ", ")) table)") }
        } catch let error as LibraryError {
            throw error
        } catch {
            throw refuse(url, "it is not a readable SQLite database (\(error))")
        }
        return db
    }

    /// The columns a table has, for files written by several versions of a program.
    static func columns(_ db: Connection, _ table: String) throws -> Set<String> {
        Set(try db.query("SELECT name FROM pragma_table_info(?)", [table]) { try $0.string(0) })
    }

    /// A time as SQLite-backed programs write it: `2026-11-30 09:53:20.123456789+09:00`,
    /// `2026-11-30T09:53:20Z`, or without an offset (UTC); Navidrome's zero time is nil.
    static func time(_ text: String?) -> Date? {
        guard let text, text.count >= 19, !text.hasPrefix("0000"), !text.hasPrefix("0001-01-01") else { return nil }
        let chars = Array(text)
        func number(_ range: Range<Int>) -> Int? { Int(String(chars[range])) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < chars.count, chars[index] == "." {
            var digits = ""
            index += 1
            while index < chars.count, chars[index].isNumber {
                digits.append(chars[index])
                index += 1
            }
            fraction = Double("0." + digits) ?? 0
        }
        var offset = 0
        if index < chars.count, chars[index] == "+" || chars[index] == "-" {
            let sign = chars[index] == "-" ? -1 : 1
            let rest = String(chars[(index + 1)...]).replacingOccurrences(of: ":", with: "")
            guard rest.count >= 4, let hours = Int(rest.prefix(2)), let minutes = Int(rest.dropFirst(2).prefix(2)) else { return nil }
            offset = sign * (hours * 3_600 + minutes * 60)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)) else {
            return nil
        }
        return date.addingTimeInterval(fraction - Double(offset))
    }
}

/// Navidrome's `navidrome.db`: users, their annotations (stars, ratings, plays of songs, albums and
/// artists), playlists in order, play queues and bookmarks. Paths are relative to their library's
/// folder since Navidrome 0.55 and absolute before; passwords are never read.
enum NavidromeReader {
    static func read(_ url: URL, only userName: String?) throws -> ForeignData {
        let db = try ForeignReaders.openDatabase(url, expecting: ["media_file", "annotation", "user"], program: "Navidrome")
        do {
            return try read(db, url: url, only: userName)
        } catch let error as LibraryError {
            throw error
        } catch {
            throw ForeignReaders.refuse(url, "reading it failed: \(error)")
        }
    }

    private static func read(_ db: Connection, url: URL, only userName: String?) throws -> ForeignData {
        var roots: [Int64: String] = [:]
        if try ForeignReaders.columns(db, "library").contains("path") {
            _ = try db.query("SELECT id, path FROM library", []) { roots[try $0.int64(0)] = try $0.string(1) }
        }
        let columns = try ForeignReaders.columns(db, "media_file")
        let mbid = columns.contains("mbz_recording_id") ? "mbz_recording_id" : columns.contains("mbz_track_id") ? "mbz_track_id" : "''"
        let library = columns.contains("library_id") ? "library_id" : "1"
        var tracks: [String: ForeignTrack] = [:]
        _ = try db.query("SELECT id, path, \(library), title, artist, album, duration, \(mbid) FROM media_file", []) { row in
            let id = try row.string(0)
            var path = try row.string(1)
            if !path.hasPrefix("/"), let root = roots[row.optionalInt64(2) ?? 1] {
                path = (root.hasSuffix("/") ? root : root + "/") + path
            }
            let recording = row.optionalString(7).flatMap { $0.isEmpty ? nil : $0 }
            tracks[id] = ForeignTrack(
                key: id, path: path, mbid: recording, artist: row.optionalString(4) ?? "", title: row.optionalString(3) ?? "",
                album: row.optionalString(5), duration: try row.get(6))
        }
        var albums: [String: (String, String)] = [:]
        _ = try db.query("SELECT id, name, album_artist FROM album", []) { albums[try $0.string(0)] = (try $0.string(1), $0.optionalString(2) ?? "") }
        var artists: [String: String] = [:]
        _ = try db.query("SELECT id, name FROM artist", []) { artists[try $0.string(0)] = try $0.string(1) }
        let hasPlaylists = try !ForeignReaders.columns(db, "playlist").isEmpty
        let hasQueue = try !ForeignReaders.columns(db, "playqueue").isEmpty
        let hasBookmarks = try !ForeignReaders.columns(db, "bookmark").isEmpty

        var users: [ForeignUser] = []
        let people = try db.query("SELECT id, user_name FROM user ORDER BY created_at, user_name", []) { (try $0.string(0), try $0.string(1)) }
        for (id, name) in people where userName.map({ $0.caseInsensitiveCompare(name) == .orderedSame }) ?? true {
            var user = ForeignUser(name: name, key: "navidrome:\(id)")
            _ = try db.query(
                "SELECT item_id, item_type, play_count, play_date, rating, starred, starred_at FROM annotation WHERE user_id = ?", [id]
            ) { row in
                let item = try row.string(0)
                let starred = (row.optionalInt64(5) ?? 0) != 0
                let starredAt = ForeignReaders.time(row.optionalString(6)) ?? Date(timeIntervalSince1970: 0)
                switch try row.string(1) {
                case "media_file":
                    guard let track = tracks[item] else { return }
                    let rating = Int(row.optionalInt64(4) ?? 0)
                    user.tracks.append(
                        ForeignTrackData(
                            track: track, starred: starred ? starredAt : nil, rating: rating > 0 ? min(rating, 5) * 20 : nil,
                            plays: Int(row.optionalInt64(2) ?? 0), lastPlayed: ForeignReaders.time(row.optionalString(3))))
                case "album":
                    if starred, let (album, artist) = albums[item] { user.albumStars.append((album, artist, starredAt)) }
                case "artist":
                    if starred, let artist = artists[item] { user.artistStars.append((artist, starredAt)) }
                default: break
                }
            }
            if hasPlaylists {
                let lists = try db.query("SELECT id, name, comment, public FROM playlist WHERE owner_id = ? ORDER BY created_at, name", [id]) {
                    (try $0.string(0), try $0.string(1), $0.optionalString(2) ?? "", ($0.optionalInt64(3) ?? 0) != 0)
                }
                for (key, name, comment, isPublic) in lists {
                    let items = try db.query("SELECT media_file_id FROM playlist_tracks WHERE playlist_id = ? ORDER BY id", [key]) {
                        let id = try $0.string(0)
                        return tracks[id] ?? ForeignTrack(key: id, path: nil, mbid: nil, artist: "", title: "(unknown Navidrome song \(id))")
                    }
                    user.playlists.append(ForeignPlaylist(key: key, name: name, comment: comment, isPublic: isPublic, items: items))
                }
            }
            if hasQueue,
                let (current, position, items, changedBy) = try db.queryOne(
                    "SELECT current, position, items, changed_by FROM playqueue WHERE user_id = ?", [id],
                    { (row: Row) in (row.optionalString(0), Int(row.optionalDouble(1) ?? 0), row.optionalString(2) ?? "", row.optionalString(3) ?? "") })
            {
                let ids = items.split(separator: ",").map(String.init)
                // `current` is an index since mid-2025, a song ID before.
                let index = current.flatMap { Int($0) }.flatMap { $0 < ids.count ? $0 : nil } ?? current.flatMap { ids.firstIndex(of: $0) }
                let queue = ids.map { tracks[$0] ?? ForeignTrack(key: $0, path: nil, mbid: nil, artist: "", title: "(unknown Navidrome song \($0))") }
                if !queue.isEmpty { user.queue = (queue, index, position, changedBy.isEmpty ? "navidrome" : changedBy) }
            }
            if hasBookmarks {
                _ = try db.query("SELECT item_id, position, comment FROM bookmark WHERE user_id = ? AND item_type = 'media_file'", [id]) { row in
                    if let track = tracks[try row.string(0)] {
                        user.bookmarks.append((track, Int(row.optionalInt64(1) ?? 0), row.optionalString(2) ?? ""))
                    }
                }
            }
            users.append(user)
        }
        if let userName, users.isEmpty { throw ForeignReaders.refuse(url, "Navidrome has no user '\(userName)'") }
        return ForeignData(sourceKey: "navidrome", users: users)
    }
}

/// beets' `library.db`: ratings, play counts, skip counts and last-played times kept as flexible
/// attributes (as mpdstats and similar plugins write them), and MusicBrainz IDs. Paths inside
/// beets' music directory are stored relative to it (beets 2.10 on); the directory is read from
/// the `config.yaml` beside the database.
enum BeetsReader {
    static func read(_ url: URL) throws -> ForeignData {
        let db = try ForeignReaders.openDatabase(url, expecting: ["items", "item_attributes"], program: "beets")
        let directory = Self.directory(besides: url)
        var data: [Int64: ForeignTrackData] = [:]
        do {
            let columns = try ForeignReaders.columns(db, "items")
            let release = columns.contains("mb_albumid") ? "mb_albumid" : "''"
            _ = try db.query("SELECT id, path, title, artist, album, length, mb_trackid, \(release) FROM items", []) { row in
                let id = try row.int64(0)
                // beets keeps paths as bytes; relative ones are under its music directory.
                var path = String(decoding: (try? row.data(1)) ?? Data((row.optionalString(1) ?? "").utf8), as: UTF8.self)
                if !path.hasPrefix("/"), let directory { path = (directory.hasSuffix("/") ? directory : directory + "/") + path }
                let recording = row.optionalString(6).flatMap { $0.isEmpty ? nil : $0 }
                let track = ForeignTrack(
                    key: String(id), path: path, mbid: recording, artist: row.optionalString(3) ?? "", title: row.optionalString(2) ?? "",
                    album: row.optionalString(4), duration: row.optionalDouble(5))
                data[id] = ForeignTrackData(track: track, recordingID: recording, releaseID: row.optionalString(7).flatMap { $0.isEmpty ? nil : $0 })
            }
            _ = try db.query(
                "SELECT entity_id, key, value FROM item_attributes WHERE key IN ('rating', 'play_count', 'skip_count', 'last_played')", []
            ) { row in
                let id = try row.int64(0)
                guard data[id] != nil, let value = Double(row.optionalString(2) ?? "") ?? row.optionalDouble(2), value.isFinite, value >= 0 else { return }
                switch try row.string(1) {
                case "rating": data[id]?.rating = rating(value)
                case "play_count": data[id]?.plays = Int(value)
                case "skip_count": data[id]?.skips = Int(value)
                case "last_played": data[id]?.lastPlayed = value > 0 ? Date(timeIntervalSince1970: value) : nil
                default: break
                }
            }
        } catch {
            throw ForeignReaders.refuse(url, "reading it failed: \(error)")
        }
        var user = ForeignUser(name: nil, key: "beets")
        user.tracks = data.keys.sorted().compactMap { data[$0] }
        return ForeignData(sourceKey: "beets", users: [user])
    }

    /// A rating on the scale its writer used, as 0–100: mpdstats writes 0–1, others 0–5, 0–10 or 0–100.
    static func rating(_ value: Double) -> Int? {
        let scaled = value <= 1 ? value * 100 : value <= 5 ? value * 20 : value <= 10 ? value * 10 : min(value, 100)
        let rounded = Int(scaled.rounded())
        return rounded > 0 ? rounded : nil
    }

    /// `directory:` of the `config.yaml` beside the database (a top-level key; `~` is the home folder).
    static func directory(besides database: URL) -> String? {
        let config = database.deletingLastPathComponent().appendingPathComponent("config.yaml")
        // Read and decoded apart: Foundation's `String(contentsOf:encoding:)` leaks its 4 KiB buffer
        // when the file is not in the encoding (shelf-fuzz, import-from target).
        guard let bytes = FileContents.read(config.path), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        // Any line ending: a config written on Windows ends its lines with CRLF (shelf-fuzz).
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("directory:") {
            var value = line.dropFirst("directory:".count).trimmingCharacters(in: .whitespaces)
            if let hash = value.range(of: " #") { value = String(value[..<hash.lowerBound]).trimmingCharacters(in: .whitespaces) }
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first { value = String(value.dropFirst().dropLast()) }
            if value.hasPrefix("~") { value = (ProcessInfo.processInfo.environment["HOME"] ?? "") + value.dropFirst() }
            return value.isEmpty ? nil : value
        }
        return nil
    }
}

/// The `Library.xml` of Apple Music and iTunes: play counts and dates, ratings (0–100; ratings
/// computed from an album's are not the track's own), loved, skips, date added, and the user's
/// playlists in order. Catalogue tracks have no `Location` and are matched by name or not at all.
enum ITunesReader {
    /// Seconds from 1904-01-01 (Apple's `Play Date`) to 1970-01-01.
    static let macEpoch = 2_082_844_800.0

    static func read(_ url: URL) throws -> ForeignData {
        guard let bytes = FileContents.read(url.path) else { throw ForeignReaders.refuse(url, "there is no such file") }
        // Apple writes the library as an XML property list. Anything else is refused before
        // Foundation tries it as an old-style list, whose error path leaks (shelf-fuzz).
        let start = bytes.prefix(64).drop { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        guard start.starts(with: Array("<?xml".utf8)) || start.starts(with: Array("<!DOCTYPE plist".utf8)) || start.starts(with: Array("<plist".utf8))
        else { throw ForeignReaders.refuse(url, "it is not an Apple Music or iTunes library export (an XML property list)") }
        guard let plist = try? PropertyListSerialization.propertyList(from: bytes, format: nil) as? [String: Any],
            let entries = plist["Tracks"] as? [String: Any]
        else { throw ForeignReaders.refuse(url, "it is not an Apple Music or iTunes library export (a property list with Tracks)") }
        var byID: [Int: ForeignTrackData] = [:]
        var added: [Int: Date] = [:]
        // In key order, so that of two entries with one Track ID the same one wins every time.
        for case let entry as [String: Any] in entries.sorted(by: { $0.key < $1.key }).map(\.value) {
            guard let id = (entry["Track ID"] as? Int) else { continue }
            var path: String?
            if let location = entry["Location"] as? String, location.hasPrefix("file://"), let fileURL = URL(string: location) {
                path = fileURL.path
            }
            let track = ForeignTrack(
                key: entry["Persistent ID"] as? String ?? String(id), path: path, mbid: nil, artist: entry["Artist"] as? String ?? "",
                title: entry["Name"] as? String ?? "", album: entry["Album"] as? String, duration: (entry["Total Time"] as? Int).map { Double($0) / 1000 })
            let computed = entry["Rating Computed"] as? Bool ?? false
            let rating = computed ? nil : (entry["Rating"] as? Int).flatMap { $0 > 0 ? min($0, 100) : nil }
            var lastPlayed = entry["Play Date UTC"] as? Date
            if lastPlayed == nil, let seconds = entry["Play Date"] as? Int { lastPlayed = Date(timeIntervalSince1970: Double(seconds) - macEpoch) }
            byID[id] = ForeignTrackData(
                track: track, starred: (entry["Loved"] as? Bool ?? false) ? (entry["Date Added"] as? Date ?? Date(timeIntervalSince1970: 0)) : nil,
                rating: rating, plays: entry["Play Count"] as? Int ?? 0, lastPlayed: lastPlayed, skips: entry["Skip Count"] as? Int ?? 0)
            added[id] = entry["Date Added"] as? Date
        }
        var user = ForeignUser(name: nil, key: "itunes:" + (plist["Library Persistent ID"] as? String ?? "library"))
        user.tracks = byID.keys.sorted().compactMap { byID[$0] }
        // Two entries can be the same track (shelf-fuzz: identical entries trapped here): the earlier date.
        user.dateAdded = Dictionary(byID.compactMap { id, data in added[id].map { (data.track, $0) } }, uniquingKeysWith: min)
        for case let list as [String: Any] in plist["Playlists"] as? [Any] ?? [] {
            // The whole library, Apple's own lists (Music is kind 4) and folders are not the user's playlists.
            if list["Master"] as? Bool == true || list["Distinguished Kind"] != nil || list["Folder"] as? Bool == true { continue }
            if list["Visible"] as? Bool == false { continue }
            let items = (list["Playlist Items"] as? [Any] ?? []).compactMap { ($0 as? [String: Any])?["Track ID"] as? Int }.map { id in
                byID[id]?.track ?? ForeignTrack(key: String(id), path: nil, mbid: nil, artist: "", title: "(unknown track \(id))")
            }
            user.playlists.append(
                ForeignPlaylist(
                    key: list["Playlist Persistent ID"] as? String ?? String(list["Playlist ID"] as? Int ?? 0), name: list["Name"] as? String ?? "Playlist",
                    comment: list["Description"] as? String ?? "", isPublic: false, items: items))
        }
        return ForeignData(sourceKey: user.key, users: [user])
    }
}

/// Listens exported by ListenBrainz (JSON lines, a JSON array, or a folder of `.jsonl` files as
/// its export archive holds them) and by Last.fm export tools (CSV: artist, album, title, date).
enum ListenExportReader {
    /// Every listen of a file, at once (small files; imports read them with `ListenChunks`).
    static func whole(_ source: ForeignSource, _ url: URL) throws -> ForeignData {
        var chunks = try ListenChunks(source, url)
        var user = ForeignUser(name: nil, key: source.rawValue)
        while let chunk = try chunks.next(10_000) { user.listens += chunk }
        return ForeignData(sourceKey: source.rawValue, users: [user])
    }

    /// One ListenBrainz listen object (a line of the export), or nil when it is not one.
    static func listenBrainz(_ object: Any) -> ForeignListen? {
        guard let object = object as? [String: Any], let at = (object["listened_at"] as? NSNumber)?.doubleValue, ForeignReaders.plausible(at),
            let metadata = object["track_metadata"] as? [String: Any]
        else { return nil }
        let info = metadata["additional_info"] as? [String: Any] ?? [:]
        let mapping = metadata["mbid_mapping"] as? [String: Any] ?? [:]
        let mbid = info["recording_mbid"] as? String ?? mapping["recording_mbid"] as? String
        let duration = (info["duration_ms"] as? NSNumber).map { $0.doubleValue / 1000 } ?? (info["duration"] as? NSNumber)?.doubleValue
        let artist = metadata["artist_name"] as? String ?? ""
        let title = metadata["track_name"] as? String ?? ""
        return ForeignListen(
            track: ForeignTrack(
                key: "\(artist)\u{1}\(title)", path: nil, mbid: mbid, artist: artist, title: title, album: metadata["release_name"] as? String,
                duration: duration), playedAt: Date(timeIntervalSince1970: at))
    }

    /// The rows of a Last.fm CSV as listens.
    static func lastfm(_ url: URL) throws -> [ForeignListen] {
        guard let data = FileContents.read(url.path) else { throw ForeignReaders.refuse(url, "there is no such file") }
        var rows = CSV.rows(String(decoding: data, as: UTF8.self))
        guard !rows.isEmpty else { throw ForeignReaders.refuse(url, "it holds no rows") }
        // With a header, columns by name; without one, artist, album, title, date.
        var columns = (artist: 0, album: 1, title: 2, date: 3)
        let header = rows[0].map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
        if header.contains("artist") {
            func index(_ names: [String]) -> Int? { header.firstIndex { names.contains($0) } }
            guard let artist = index(["artist"]), let title = index(["title", "track", "name"]),
                let date = index(["date", "utc", "uts", "timestamp", "time", "played"])
            else { throw ForeignReaders.refuse(url, "its header names no artist, title or date column") }
            columns = (artist, index(["album"]) ?? -1, title, date)
            rows.removeFirst()
        }
        var listens: [ForeignListen] = []
        for (number, row) in rows.enumerated() where !(row.count == 1 && row[0].isEmpty) {
            let field = { (index: Int) in index >= 0 && index < row.count ? row[index] : "" }
            guard let at = date(field(columns.date)), ForeignReaders.plausible(at.timeIntervalSince1970) else {
                throw ForeignReaders.refuse(url, "row \(number + 1): '\(field(columns.date))' is not a date (31 Jan 2021 12:34, ISO 8601 or Unix seconds)")
            }
            let (artist, title, album) = (field(columns.artist), field(columns.title), field(columns.album))
            listens.append(
                ForeignListen(
                    track: ForeignTrack(key: "\(artist)\u{1}\(title)", path: nil, mbid: nil, artist: artist, title: title, album: album.isEmpty ? nil : album),
                    playedAt: at))
        }
        return listens
    }

    /// Last.fm exports' dates: `31 Jan 2021 12:34` or `31 Jan 2021, 12:34` (UTC), ISO 8601, or
    /// Unix seconds. Read by Shelf itself (`InternetDate`), not Foundation's DateFormatter, which
    /// traps on a date whose text runs into a combining mark.
    static func date(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(text), seconds > 0 { return Date(timeIntervalSince1970: seconds > 1e11 ? seconds / 1000 : seconds) }
        return InternetDate.parse(text) ?? ForeignReaders.time(text)
    }
}

/// An export's listens a chunk at a time, so that a history of millions is never held whole:
/// ListenBrainz's JSON lines are read a block at a time (a JSON array, and a Last.fm CSV, whose
/// quoted fields may hold newlines, are parsed whole). `bytesRead` of `totalBytes` is the progress.
struct ListenChunks {
    private var files: [URL]
    private let source: ForeignSource
    private var pending: [ForeignListen] = []
    private var handle: FileHandle?
    private var file: URL?
    private var buffer = Data()
    private var line = 0
    private(set) var bytesRead: Int64 = 0
    let totalBytes: Int64

    init(_ source: ForeignSource, _ url: URL) throws {
        self.source = source
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { throw ForeignReaders.refuse(url, "there is no such file") }
        if isDirectory.boolValue, source == .listenbrainz {
            var found: [URL] = []
            let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil)
            while let next = walker?.nextObject() as? URL {
                if ["jsonl", "json"].contains(next.pathExtension.lowercased()) { found.append(next) }
            }
            files = found.sorted { $0.path < $1.path }
        } else {
            files = [url]
        }
        totalBytes = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int64) ?? 0) }
    }

    /// Up to `count` more listens; nil at the end.
    mutating func next(_ count: Int) throws -> [ForeignListen]? {
        var out: [ForeignListen] = []
        while out.count < count {
            if !pending.isEmpty {
                let take = min(count - out.count, pending.count)
                out += pending.prefix(take)
                pending.removeFirst(take)
                continue
            }
            if handle != nil {
                if let listen = try nextLine() {
                    if let listen { out.append(listen) }
                    continue
                }
                try? handle?.close()
                handle = nil
                continue
            }
            guard !files.isEmpty else { break }
            let url = files.removeFirst()
            file = url
            line = 0
            if source == .lastfm {
                pending = try ListenExportReader.lastfm(url)
                bytesRead += (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
                continue
            }
            guard let opened = FileHandle(forReadingAtPath: url.path) else { throw ForeignReaders.refuse(url, "it cannot be read") }
            let head = try opened.read(upToCount: 64) ?? Data()
            if head.first(where: { ![32, 9, 10, 13].contains($0) }) == UInt8(ascii: "[") {
                // A JSON array: parsed whole.
                try opened.close()
                guard let data = FileContents.read(url.path),
                    let array = try? JSONSerialization.jsonObject(with: data) as? [Any]
                else { throw ForeignReaders.refuse(url, "it is not a JSON array of listens") }
                pending = array.compactMap(ListenExportReader.listenBrainz)
                bytesRead += Int64(data.count)
                continue
            }
            buffer = head
            bytesRead += Int64(head.count)
            handle = opened
        }
        return out.isEmpty && files.isEmpty && handle == nil && pending.isEmpty ? nil : out
    }

    /// The next line's listen (`.some(nil)` for a blank line or another object), or nil at the file's end.
    private mutating func nextLine() throws -> ForeignListen?? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let text = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                return try parse(Data(text))
            }
            let more = try handle?.read(upToCount: 1 << 20) ?? Data()
            if more.isEmpty {
                guard !buffer.isEmpty else { return nil }
                let last = buffer
                buffer = Data()
                return try parse(last)
            }
            buffer += more
            bytesRead += Int64(more.count)
        }
    }

    private mutating func parse(_ text: Data) throws -> ForeignListen?? {
        line += 1
        if text.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { return .some(nil) }
        guard let object = try? JSONSerialization.jsonObject(with: text) else {
            throw ForeignReaders.refuse(file ?? URL(fileURLWithPath: "?"), "line \(line) is not JSON")
        }
        return .some(ListenExportReader.listenBrainz(object))
    }
}

/// RFC 4180 CSV: quoted fields with doubled quotes, commas and newlines inside them.
enum CSV {
    static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = iterator.next()
        while let c = pending {
            pending = iterator.next()
            if quoted {
                if c == "\"" {
                    if pending == "\"" {
                        field.unicodeScalars.append("\"")
                        pending = iterator.next()
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty: quoted = true
            case ",":
                row.append(field)
                field = ""
            case "\n", "\r":
                if c == "\r", pending == "\n" { pending = iterator.next() }
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            default: field.unicodeScalars.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}
