# frozen_string_literal: true

require 'sinatra/base'
require_relative 'answers'
require_relative 'counters'

module Iolab
  # The contract's paths as one Sinatra app (the E4 article's framework); the
  # model decides only what handles /work (settings.work, see work.rb).
  class App < Sinatra::Base
    set :environment, :production
    set :logging, false
    set :protection, false # not in the 2010 article's Sinatra 1.1; costs work per request
    set :show_exceptions, false
    set :raise_errors, false
    set :static, false
    set :x_cascade, false
    set :held, nil # Held on Thin's reactor (held.rb); unicorn has none

    NO_HELD = 'prefork (unicorn) holds no connection: it has no event loop for faye-websocket; ' \
              'use loop-async, pool or sequential (Thin) for /ws and /events'

    get('/work') { settings.work.call(env) }
    get('/ws') { settings.held ? settings.held.websocket(env) : json(501, Answers.error(NO_HELD)) }
    get('/events') { settings.held ? settings.held.events(env) : json(501, Answers.error(NO_HELD)) }
    get('/health') { json(200, Answers.health) }
    get('/metrics') { [200, { 'Content-Type' => Answers::PROMETHEUS_TYPE }, [Counters.prometheus]] }

    %w[POST PUT DELETE PATCH OPTIONS LINK UNLINK].each do |verb|
      route(verb, %r{.*}) { json(405, Answers.method_not_allowed(verb)) }
    end

    not_found { json(404, Answers.not_found(request.path_info)) }

    error do
      e = env['sinatra.error']
      warn "iolab: #{e.class}: #{e.message}\n  #{Array(e.backtrace).first(5).join("\n  ")}"
      json(500, Answers.error("internal error: #{e.class}: #{e.message}"))
    end

    helpers do
      def json(status, body) = [status, { 'Content-Type' => Answers::JSON_TYPE }, [body]]
    end
  end
end
