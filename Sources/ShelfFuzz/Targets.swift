import CFuzzDriver
import Foundation
import ShelfCore

@testable import Shelf
@testable import ShelfServer

// The fuzz targets: one per parser of outside input, each checking what must always hold of what
// it parses, not only that nothing crashes. Globals here (not in main.swift) are initialized on
// first use, so libFuzzer's own `main` (make fuzz) can reach them without main.swift running.

/// What must hold; a failure stops the process, which libFuzzer reports with the input.
func require(_ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("shelf-fuzz: invariant broken: \(what())\n".utf8))
        abort()
    }
}

/// A scratch file for the parsers that read a path (one per process, rewritten per input).
let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shelf-fuzz-\(getpid())")

func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

let targets: [String: @Sendable (Data) -> Void] = [
    // The filter language: parsing is a function of the text, and never throws anything but its own error.
    "filter": { data in
        let input = text(data)
        let first = try? FilterParser.parse(input)
        let second = try? FilterParser.parse(input)
        require(first == second, "the same text parsed to two filters")
    },
    "smart-rule": { data in
        _ = try? SmartRules.parseCondition(text(data))
        _ = try? SmartRules(json: text(data))
    },
    // A cursor that decodes encodes to the same cursor, and its encoding decodes again.
    "cursor": { data in
        guard let cursor = PageCursor(text(data)) else { return }
        require(PageCursor(cursor.description) == cursor, "cursor \(cursor.description) does not decode to itself")
    },
    "token": { data in
        guard let token = ChangeToken(text(data)) else { return }
        require(ChangeToken(token.description) == token, "token \(token.description) does not decode to itself")
    },
    // A request target and a form body: every pair named, nothing invented.
    "form": { data in
        let input = text(data)
        if let pairs = try? HTTPRequest.parseForm(input) {
            require(pairs.count <= input.utf8.count + 1, "more pairs than bytes")
        }
        _ = try? HTTPRequest.parseTarget("/x?" + input)
    },
    // A Range header against a file of the first two bytes' size: a part lies inside the file.
    "range": { data in
        let size = UInt64(data.prefix(2).reduce(0) { $0 << 8 | Int($1) })
        switch StreamResponder.range(text(data.dropFirst(2)), size: size) {
        case .partial(let start, let end): require(start <= end && end < size, "range \(start)-\(end) outside \(size) bytes")
        case .whole, .unsatisfiable: break
        }
    },
    "cookie": { data in
        let request = HTTPRequest(method: "GET", path: "/", query: [], headers: ["cookie": text(data)], body: Data())
        if let value = request.cookie("shelf_session") { require(!value.contains(";"), "a cookie value holds ';'") }
    },
    "network": { data in
        guard let network = IPNetwork(text(data)) else { return }
        require(IPNetwork(network.description) != nil, "network \(network.description) does not parse again")
    },
    "config": { data in
        _ = try? ServerConfig.parse(text(data), file: "fuzz.toml")
    },
    // A CUE sheet: tracks in order of number, each starting at or after the one before in its file.
    "cue": { data in
        guard let sheet = try? CueSheet.parse(data, name: "fuzz.cue") else { return }
        for (a, b) in zip(sheet.tracks, sheet.tracks.dropFirst()) where a.file == b.file {
            require(a.start <= b.start, "track \(b.number) starts before track \(a.number)")
        }
        for track in sheet.tracks { require(track.start >= 0 && track.start.isFinite, "track \(track.number) starts at \(track.start)") }
    },
    // LRC and enhanced LRC: times are never negative, lines keep their order of time.
    "lrc": { data in
        let input = text(data)
        if let lines = SubsonicAPI.syncedLines(input) {
            for (time, _) in lines { require(time >= 0, "a line at \(time) ms") }
        }
        _ = SubsonicAPI.lrcHeader(input)
        for line in input.split(separator: "\n").prefix(50) {
            let timed = SubsonicAPI.wordTimings(String(line))
            for word in timed.words { require(word.start >= 0, "a word at \(word.start) ms") }
        }
    },
    // Text in any of the encodings Shelf reads: UTF-8 comes back unchanged.
    "legacy-text": { data in
        guard let decoded = LegacyText.decode(data) else { return }
        if let utf8 = String(validating: data, as: UTF8.self), !data.starts(with: [0xEF, 0xBB, 0xBF]), decoded.encoding == .utf8 {
            require(decoded.text == utf8, "UTF-8 text changed")
        }
    },
    "m3u": { data in
        try? data.write(to: scratch.appendingPathExtension("m3u"))
        if let playlist = try? PlaylistFile.read(scratch.appendingPathExtension("m3u").path) {
            for entry in playlist.entries { require(!entry.text.isEmpty && !entry.text.hasPrefix("#"), "entry '\(entry.text)'") }
        }
    },
    "podcast": { data in
        // Bounded whatever the feed says: at most `itemLimit` items, descriptions cut at their limit.
        guard let feed = try? PodcastFeed.parse(data) else { return }
        require(feed.items.count <= PodcastFeed.itemLimit, "\(feed.items.count) items")
        for item in feed.items {
            require(item.description.utf8.count <= PodcastFeed.descriptionLimit * 4, "a description of \(item.description.utf8.count) bytes")
        }
    },
    // The layout walkers (WAV/RF64, AIFF, MP4, Ogg, Matroska, DSF/DSDIFF) over bytes in memory.
    "layout": { data in
        _ = try? AudioLayout.detect(size: Int64(data.count)) { offset, count in
            guard offset >= 0, offset < Int64(data.count), count >= 0 else { return Data() }
            return data.subdata(in: Int(offset)..<min(data.count, Int(offset) + count))
        }
    },
    "identity": { data in
        try? data.write(to: scratch.appendingPathExtension("bin"))
        if let identity = try? AudioIdentity.identities(scratch.appendingPathExtension("bin")) {
            // A scheme and a digest (`v1:…`, `flac-md5:…`), never empty or with spaces.
            require(identity.current.contains(":") && !identity.current.contains(" "), "identity \(identity.current)")
        }
    },
    // Pictures within small limits: a decode never yields more pixels than the limits allow.
    "image": { data in
        let limits = ImageLimits(maxSide: 2_048, maxPixels: 1 << 20)
        if let image = try? ImageCodec.decode(data, maxPixelSize: 64, limits: limits) {
            require(image.width > 0 && image.height > 0 && image.width <= 2_048 && image.height <= 2_048, "\(image.width)×\(image.height)")
        }
        _ = try? ImageCodec.dimensions(of: data)
    },
    // Subsonic parameters: an ID, numbers and flags from any text.
    "subsonic-params": { data in
        let pairs = (try? HTTPRequest.parseForm(text(data))) ?? []
        let parameters = SubsonicParameters(pairs: pairs)
        _ = try? parameters.id()
        _ = try? parameters.int("size", in: 0...500)
        _ = try? parameters.bool("public")
        _ = SubsonicRenderer.isOlder(parameters.value("v"))
    },
]
