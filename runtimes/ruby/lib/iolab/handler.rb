# frozen_string_literal: true

require_relative 'query'
require_relative 'backends'
require_relative 'counters'

module Iolab
  # One /work request around the model's runner: parse, check the backends,
  # run, answer; /metrics accounting around it all.
  module Handler
    # Answers with the run's outcome: the fetched value (body=value) or the JSON.
    def self.reply(model, work, error, value, started)
      return json(error.status, Answers.error(error.message)) if error
      return [200, { 'Content-Type' => Answers::VALUE_TYPE }, [value]] if work.value_body

      json(200, Answers.ok(model, work.step.leaf_count, now - started))
    end

    def self.json(status, body) = [status, { 'Content-Type' => Answers::JSON_TYPE }, [body]]
    def self.now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    # The parsed request, or the Rack answer refusing it.
    def self.plan(env, settings)
      work = Query.work(env['QUERY_STRING'])
      Backends.check!(work.step, settings)
      work
    rescue WorkError => e
      json(e.status, Answers.error(e.message))
    end

    # sequential, pool, prefork: the request's thread runs it to the end.
    class Blocking
      attr_reader :runner

      def initialize(settings, runner)
        @settings = settings
        @runner = runner
      end

      def call(env)
        Counters.start
        started = Handler.now
        work = Handler.plan(env, @settings)
        return work if work.is_a?(Array)

        begin
          value = @runner.run(work.step)
          Handler.reply(@settings.model, work, nil, value, started)
        rescue WorkError => e
          Handler.reply(@settings.model, work, e, nil, started)
        end
      ensure
        Counters.finish
      end
    end

    # loop-async: the article's way. The handler starts the work and answers
    # Thin's AsyncResponse; the last callback sends the answer through
    # env['async.callback'].
    class Evented
      ASYNC_RESPONSE = [-1, {}, []].freeze
      attr_reader :runner

      def initialize(settings, runner)
        @settings = settings
        @runner = runner
      end

      def call(env)
        Counters.start
        started = Handler.now
        work = Handler.plan(env, @settings)
        if work.is_a?(Array)
          Counters.finish
          return work
        end
        answer = nil
        returned = false
        finish = lambda do |reply|
          next if answer # one answer per request, whatever a buggy callback does

          answer = reply
          Counters.finish
          env['async.callback'].call(reply) if returned
        end
        begin
          @runner.run(work.step) { |error, value| finish.call(Handler.reply(@settings.model, work, error, value, started)) }
        rescue StandardError => e
          warn "iolab: #{e.class}: #{e.message}"
          finish.call(Handler.json(500, Answers.error("internal error: #{e.class}: #{e.message}")))
        end
        returned = true
        answer || ASYNC_RESPONSE
      end
    end
  end
end
