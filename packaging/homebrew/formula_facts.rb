# frozen_string_literal: true

# ruby formula_facts.rb FORMULA linux|macos: evaluate a formula against a stand-in for
# the part of Homebrew's formula DSL that mux.rb uses, and print what it declares on
# that system as JSON (resources, dependencies, the service, what `install` does).
# tests/packaging/test_homebrew.py compares that with packaging/requirements.txt; no
# Homebrew is needed (nor macOS). A stanza this stand-in does not know is an error, and
# the service block's values are checked as Homebrew's Homebrew::Service checks them.
require "json"

SYSTEM = ARGV.fetch(1)
abort "usage: formula_facts.rb FORMULA linux|macos" unless %w[linux macos].include?(SYSTEM)
FACTS = {
  "stanzas" => {}, "depends_on" => [], "resources" => [], "service" => nil,
  "install" => [], "has_test" => false, "caveats" => nil, "pypi_packages" => {}
}

# A path below one of the formula's directories, named after it ("bin/muxctl").
class StubPath
  def initialize(path)
    @path = path
  end

  def /(other)
    StubPath.new("#{@path}/#{other}")
  end

  def to_s
    @path
  end

  def install(*files)
    FACTS["install"] << { "call" => "install", "into" => @path, "files" => files.map(&:to_s) }
  end
end

# `on_linux do`, `on_macos do`: the block runs on that system only.
module OnSystemStub
  def on_linux
    yield if SYSTEM == "linux"
  end

  def on_macos
    yield if SYSTEM == "macos"
  end
end

module Language
  module Python
    module Virtualenv
      def virtualenv_install_with_resources(**options)
        FACTS["install"] << { "call" => "virtualenv_install_with_resources", "options" => options }
      end
    end
  end
end

# A resource's own stanzas.
class ResourceStub
  attr_reader :facts

  def initialize(name)
    @facts = { "name" => name }
  end

  def url(value, **_options)
    @facts["url"] = value
  end

  def sha256(value)
    @facts["sha256"] = value
  end
end

# The service block, with Homebrew::Service's own checks of its values.
class ServiceStub
  include OnSystemStub

  KEEP_ALIVE_KEYS = [:always, :successful_exit, :crashed, :path].freeze
  PROCESS_TYPES = [:background, :standard, :interactive, :adaptive].freeze
  SOCKET = %r{^(?<type>[a-z]+)://(?<host>.+):(?<port>[0-9]+)$}i

  attr_reader :facts

  def initialize(formula)
    @formula = formula
    @facts = {}
  end

  def run(command = nil, macos: nil, linux: nil)
    command ||= (SYSTEM == "macos") ? macos : linux
    @facts["run"] = Array(command).map(&:to_s)
  end

  def keep_alive(value)
    if value.is_a?(Hash)
      unknown = value.keys - KEEP_ALIVE_KEYS
      raise TypeError, "keep_alive allows only #{KEEP_ALIVE_KEYS}, not #{unknown}" unless unknown.empty?
    elsif value != true && value != false
      raise TypeError, "keep_alive takes true, false or a Hash"
    end
    @facts["keep_alive"] = value.is_a?(Hash) ? value.transform_keys(&:to_s) : { "always" => value }
  end

  def process_type(value)
    raise TypeError, "process_type allows #{PROCESS_TYPES}, not #{value.inspect}" unless PROCESS_TYPES.include?(value)

    @facts["process_type"] = value.to_s
  end

  def sockets(value)
    Array(value.is_a?(Hash) ? value.values : value).each do |socket|
      raise TypeError, "sockets takes <type>://<host>:<port>, not #{socket}" unless socket.match?(SOCKET)
    end
    @facts["sockets"] = value
  end

  def environment_variables(variables)
    @facts["environment_variables"] = variables.transform_keys(&:to_s).transform_values(&:to_s)
  end

  %w[log_path error_log_path working_dir input_path].each do |name|
    define_method(name) { |path| @facts[name] = path.to_s }
  end

  %w[run_at_load require_root launch_only_once].each do |name|
    define_method(name) { |value| @facts[name] = value }
  end

  def std_service_path_env
    "HOMEBREW_PREFIX/bin:HOMEBREW_PREFIX/sbin:/usr/bin:/bin:/usr/sbin:/sbin"
  end

  %w[bin opt_bin opt_prefix var etc libexec].each do |name|
    define_method(name) { StubPath.new(name) }
  end
end

# The formula DSL: class-level stanzas are recorded; an unknown one is an error.
class Formula
  class << self
    include OnSystemStub

    %w[desc homepage url sha256 license version revision].each do |name|
      define_method(name) { |value, **_options| FACTS["stanzas"][name] = value }
    end

    def depends_on(spec)
      name, kind = spec.is_a?(Hash) ? spec.first : [spec, nil]
      FACTS["depends_on"] << { "name" => name.to_s, "kind" => kind&.to_s }
    end

    def uses_from_macos(spec)
      depends_on(spec)
    end

    # What `brew update-python-resources` resolves; exclude_packages: the packages (with
    # their dependency trees) that formulae this one depends on provide instead.
    PYPI_PACKAGES_KEYS = [:package_name, :extra_packages, :exclude_packages, :dependencies,
                          :needs_manual_update].freeze

    def pypi_packages(**options)
      unknown = options.keys - PYPI_PACKAGES_KEYS
      raise ArgumentError, "pypi_packages allows only #{PYPI_PACKAGES_KEYS}, not #{unknown}" unless unknown.empty?

      FACTS["pypi_packages"] = options.to_h do |key, value|
        [key.to_s, value.is_a?(String) ? [value] : value]
      end
    end

    def resource(name, &block)
      resource = ResourceStub.new(name)
      resource.instance_eval(&block)
      FACTS["resources"] << resource.facts
    end

    def service(&block)
      @service_block = block
    end

    attr_reader :service_block

    def test(&_block)
      FACTS["has_test"] = true
    end
  end

  %w[bin man1 opt_bin var bash_completion zsh_completion fish_completion].each do |name|
    define_method(name) { StubPath.new(name) }
  end

  def generate_completions_from_executable(*command, **options)
    FACTS["install"] << {
      "call" => "generate_completions_from_executable", "command" => command.map(&:to_s),
      "options" => options.transform_keys(&:to_s)
    }
  end
end

load ARGV.fetch(0)
formulae = Formula.subclasses
abort "#{ARGV[0]} defines #{formulae.size} formulae" unless formulae.size == 1
formula = formulae.first.new
formula.install
FACTS["caveats"] = formula.caveats if formula.respond_to?(:caveats)
if (block = formula.class.service_block)
  service = ServiceStub.new(formula)
  service.instance_eval(&block)
  FACTS["service"] = service.facts
end
FACTS["class"] = formula.class.name
puts JSON.pretty_generate(FACTS)
