# frozen_string_literal: true

require 'faye/websocket'
require_relative 'answers'
require_relative 'counters'
require_relative 'query'
require_relative 'backends'

module Iolab
  # The contract's held connections (runtimes/README.md, "Held connections";
  # the Rust reference is crates/servers/src/held.rs) on Thin's EventMachine
  # reactor, with Debian's faye-websocket:
  #   GET /ws[?steps=...]   each message runs the URL's steps, counted as a
  #                         /work, then is echoed unchanged; one connection's
  #                         messages one after the other; steps that fail close
  #                         it 1011, a client silent for IDLE_S 1001.
  #   GET /events[?every=]  text/event-stream, the first event at once, then
  #                         one every interval: `id: N` and
  #                         `data: {"seq":N,"sent_unix_us":T}`.
  # How a message's steps wait is the model's: loop-async's callbacks on the
  # reactor, pool's EM.defer thread, sequential's reactor thread (blocked for
  # them, as for a request). An idle held socket costs the reactor a
  # connection object, no thread. unicorn (prefork) has no reactor: 501.
  class Held
    IDLE_S = 60
    MAX_FRAME = 1 << 20
    EVERY_S = 1.0
    MIN_EVERY_S = 0.001
    UNITS = { 'us' => 1e-6, 'µs' => 1e-6, 'ms' => 1e-3, 's' => 1.0, 'm' => 60.0, 'min' => 60.0, 'h' => 3600.0 }.freeze
    PART = /\G(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|min|m|s|h)/

    # iolab's durations (`100ms`, `1s`, `1m30s`) in seconds, or nil.
    def self.duration_s(text)
      total = 0.0
      at = 0
      while at < text.length
        m = PART.match(text, at) or return nil
        total += m[1].to_f * UNITS.fetch(m[2])
        at = m.end(0)
      end
      at.positive? && total <= 7 * 86_400 ? total : nil
    end

    # `every=` of a raw query: default 1 s, at least 1 ms.
    def self.every_s(query)
      raw = (query || '').split('&').find { |p| p.start_with?('every=') }&.delete_prefix('every=')
      [MIN_EVERY_S, (raw && duration_s(raw)) || EVERY_S].max
    end

    def self.event(seq)
      us = Process.clock_gettime(Process::CLOCK_REALTIME, :microsecond)
      "id: #{seq}\ndata: {\"seq\":#{seq},\"sent_unix_us\":#{us}}\n\n"
    end

    def initialize(settings, runner)
      @settings = settings
      @runner = runner
    end

    def websocket(env)
      unless Faye::WebSocket.websocket?(env)
        return [400, { 'Content-Type' => Answers::JSON_TYPE },
                [Answers.error('GET /ws needs Upgrade: websocket and Sec-WebSocket-Key')]]
      end
      query = env['QUERY_STRING'].to_s
      query = nil if query.empty?
      hold(env, query).rack_response
    end

    def events(env)
      every = Held.every_s(env['QUERY_STRING'])
      body = Stream.new
      start = lambda do
        env['async.callback'].call([200, { 'Content-Type' => 'text/event-stream', 'Cache-Control' => 'no-cache' }, body])
        push(body, 1, Process.clock_gettime(Process::CLOCK_MONOTONIC), every)
      end
      EM.next_tick(&start)
      env['async.close']&.callback { body.closed = true }
      env['async.close']&.errback { body.closed = true }
      [-1, {}, []]
    end

    private

    # One WebSocket, its messages run and echoed in order.
    def hold(env, query)
      ws = Faye::WebSocket.new(env, nil, ping: nil, max_length: MAX_FRAME)
      queue = []
      busy = false
      idle = nil
      rearm = lambda do
        idle&.cancel
        idle = EM::Timer.new(IDLE_S) { ws.close(1001, 'idle') }
      end
      rearm.call
      turn = lambda do
        next if busy || queue.empty?

        busy = true
        data = queue.shift
        steps(query) do |ok|
          busy = false
          if ok
            ws.send(data)
            turn.call
          else
            queue.clear
            ws.close(1011, "the message's steps failed")
          end
        end
      end
      ws.on(:message) do |event|
        rearm.call
        queue << event.data
        turn.call
      end
      ws.on(:close) { idle&.cancel }
      ws
    end

    # The URL's steps the model's way; done.(ok) on the reactor.
    def steps(query, &done)
      return done.call(true) if query.nil?

      Counters.start
      work = begin
        w = Query.work(query)
        Backends.check!(w.step, @settings)
        w
      rescue WorkError
        nil
      end
      finish = ->(ok) { Counters.finish; done.call(ok) }
      return finish.call(false) unless work

      case @settings.model
      when 'loop-async' then @runner.run(work.step) { |e, _| finish.call(e.nil?) }
      when 'pool' then EM.defer(-> { run_blocking(work) }, finish)
      else finish.call(run_blocking(work))
      end
    end

    def run_blocking(work)
      @runner.run(work.step)
      true
    rescue WorkError
      false
    end

    # Events at `every`, each due time from the first (no drift), until the client goes.
    def push(body, seq, due, every)
      return if body.closed

      body.call(Held.event(seq))
      due += every
      EM.add_timer([due - Process.clock_gettime(Process::CLOCK_MONOTONIC), 0].max) { push(body, seq + 1, due, every) }
    end

    # Thin's deferrable body: each chunk written as it comes.
    class Stream
      include EM::Deferrable
      attr_accessor :closed

      def each(&blk) = @out = blk
      def call(chunk) = @out&.call(chunk)
    end
  end
end
