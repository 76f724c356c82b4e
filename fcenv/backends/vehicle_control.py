"""VehicleControlAPI: a car's engine, doors, brakes, climate and navigation, as in BFCL's
multi-turn scenarios.

Behaviour (messages, check order, which malformed inputs raise, seeded random readings)
follows the reference backend as observed by differential tests. The zip-code and
distance tables were read off the reference's answers. In long-context mode several
read methods add BFCL's filler text to what they return; the state is never padded.
"""

from __future__ import annotations

import random
from typing import Any

from fcenv.backends.long_context import filler, filler_copy
from fcenv.backends.plain_data import plain_copy

_API_DESCRIPTION = (
    "This tool belongs to the vehicle control system, which allows users to control various "
    "aspects of the car such as engine, doors, climate control, lights, and more."
)
_MAX_FUEL_LEVEL = 50
_MIN_FUEL_LEVEL = 0.0
_MILES_PER_GALLON = 20.0
_LITERS_PER_GALLON = 3.78541
_GALLONS_PER_LITER = 0.264172
_MAX_BRAKE_FORCE = 1000
# The reference seeds its generator with this constant whatever the scenario says.
_RANDOM_SEED = 141053
_DEFAULT_STATE: dict[str, Any] = {
    "fuelLevel": 0.0,
    "batteryVoltage": 12.6,
    "engineState": "stopped",
    "doorStatus": {
        "driver": "unlocked",
        "passenger": "unlocked",
        "rear_left": "unlocked",
        "rear_right": "unlocked",
    },
    "acTemperature": 25.0,
    "fanSpeed": 50,
    "acMode": "auto",
    "humidityLevel": 50.0,
    "headLightStatus": "off",
    "parkingBrakeStatus": "released",
    "parkingBrakeForce": 0.0,
    "slopeAngle": 0.0,
    "brakePedalStatus": "released",
    "brakePedalForce": 0.0,
    "distanceToNextVehicle": 50.0,
    "cruiseStatus": "inactive",
    "destination": "None",
    "frontLeftTirePressure": 32.0,
    "frontRightTirePressure": 32.0,
    "rearLeftTirePressure": 30.0,
    "rearRightTirePressure": 30.0,
}
_ZIPCODES = (
    ("Rivermist", "83214"),
    ("Stonebrook", "74532"),
    ("Maplecrest", "56108"),
    ("Silverpine", "62947"),
    ("Shadowridge", "71354"),
    ("Sunset Valley", "83462"),
    ("Oakendale", "47329"),
    ("Willowbend", "52013"),
    ("Crescent Hollow", "69238"),
    ("Autumnville", "51479"),
    ("San Francisco", "94016"),
)
# Road distances in km between zip codes (either direction), as the reference answers them.
_DISTANCES: tuple[tuple[str, str, float], ...] = (
    ("83214", "94016", 980.0),
    ("74532", "94016", 880.0),
    ("83214", "74532", 750.0),
    ("56108", "62947", 320.0),
    ("71354", "83462", 450.0),
    ("47329", "52013", 290.0),
    ("69238", "51479", 630.0),
    ("94016", "62947", 780.0),
    ("62947", "47329", 1053.0),
    ("94016", "08540", 1950.0),
    ("94016", "94704", 600.0),
    ("94704", "08540", 2550.0),
)
_TIRE_SHOP = "456 Oakwood Avenue, Rivermist, 83214"


class VehicleControlAPI:
    def __init__(self) -> None:
        self._api_description = _API_DESCRIPTION

    def __eq__(self, value: object) -> bool:
        if not isinstance(value, VehicleControlAPI):
            return False
        return all(
            getattr(value, name) == mine
            for name, mine in vars(self).items()
            if not name.startswith("_")
        )

    __hash__ = None  # type: ignore[assignment]

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        self._random = random.Random(_RANDOM_SEED)

        def pick(key: str) -> Any:
            return scenario.get(key, defaults[key])

        self.fuelLevel = pick("fuelLevel")
        self.batteryVoltage = pick("batteryVoltage")
        self.engine_state = pick("engineState")
        self.doorStatus = pick("doorStatus")
        # Derived from the doors; a "remainingUnlockedDoors" in the scenario is ignored.
        self.remainingUnlockedDoors = 4 - sum(
            1 for status in self.doorStatus.values() if status == "locked"
        )
        self.acTemperature = pick("acTemperature")
        self.fanSpeed = pick("fanSpeed")
        self.acMode = pick("acMode")
        self.humidityLevel = pick("humidityLevel")
        self.headLightStatus = pick("headLightStatus")
        self.parkingBrakeStatus = pick("parkingBrakeStatus")
        self._parkingBrakeForce = pick("parkingBrakeForce")
        self._slopeAngle = pick("slopeAngle")
        self.brakePedalStatus = pick("brakePedalStatus")
        self._brakePedalForce = pick("brakePedalForce")
        self.distanceToNextVehicle = pick("distanceToNextVehicle")
        self.cruiseStatus = pick("cruiseStatus")
        self.destination = pick("destination")
        self.frontLeftTirePressure = pick("frontLeftTirePressure")
        self.frontRightTirePressure = pick("frontRightTirePressure")
        self.rearLeftTirePressure = pick("rearLeftTirePressure")
        self.rearRightTirePressure = pick("rearRightTirePressure")
        self.long_context = long_context

    def startEngine(self, ignitionMode: str) -> dict:
        # "STOP" stops the engine at once, yet the call still runs the start checks and
        # never reports success (the reference's behaviour).
        if ignitionMode == "STOP":
            self.engine_state = "stopped"
        if self.remainingUnlockedDoors > 0:
            unlocked = ", ".join(
                door for door, status in self.doorStatus.items() if status == "unlocked"
            )
            return {
                "error": "All doors must be locked before starting the engine. "
                f"Here are the unlocked doors: {unlocked}"
            }
        if self.brakePedalStatus != "pressed":
            return {"error": "Brake pedal needs to be pressed when starting the engine."}
        if self._brakePedalForce != _MAX_BRAKE_FORCE:
            return {"error": "Must press the brake fully before starting the engine."}
        if self.fuelLevel < _MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty."}
        if ignitionMode != "START":
            return {"error": "Invalid ignition mode."}
        self.engine_state = "running"
        return {
            "engineState": self.engine_state,
            "fuelLevel": self.fuelLevel,
            "batteryVoltage": self.batteryVoltage,
        }

    def fillFuelTank(self, fuelAmount: float) -> dict:
        if fuelAmount < 0:
            return {"error": "Fuel amount cannot be negative."}
        if self.fuelLevel + fuelAmount > _MAX_FUEL_LEVEL:
            return {"error": "Cannot fill gas above the tank capacity."}
        if self.fuelLevel + fuelAmount < _MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty. Min fuel level is 0 gallons."}
        self.fuelLevel += fuelAmount
        return {"fuelLevel": self.fuelLevel}

    def lockDoors(self, unlock: bool, door: list) -> dict:
        # The counter moves only for doors whose status actually changes; an unknown door
        # raises KeyError part-way, after the doors before it were handled.
        for name in door:
            if unlock:
                if self.doorStatus[name] != "unlocked":
                    self.doorStatus[name] = "unlocked"
                    self.remainingUnlockedDoors += 1
            elif self.doorStatus[name] != "locked":
                self.doorStatus[name] = "locked"
                self.remainingUnlockedDoors -= 1
        return {
            "lockStatus": "unlocked" if unlock else "locked",
            "remainingUnlockedDoors": self.remainingUnlockedDoors,
        }

    def adjustClimateControl(
        self, temperature: float, unit: str = "celsius", fanSpeed: int = 50, mode: str = "auto"
    ) -> dict:
        if not (0 <= fanSpeed <= 100):
            return {"error": "Fan speed must be between 0 and 100."}
        # Stored as given first, so a failed conversion leaves the raw value behind.
        self.acTemperature = temperature
        if unit == "fahrenheit":
            self.acTemperature = (temperature - 32) * 5 / 9
        self.fanSpeed = fanSpeed
        self.acMode = mode
        # The reply echoes the temperature as given, not the stored Celsius value.
        return {
            "currentACTemperature": temperature,
            "climateMode": self.acMode,
            "humidityLevel": self.humidityLevel,
        }

    def get_outside_temperature_from_google(self) -> dict:
        temperature = self._random.uniform(-10.0, 40.0)
        if self.long_context:
            return {
                **filler_copy("LONG_WEATHER_EXTENSION"),
                "outsideTemperature": temperature,
            }
        return {"outsideTemperature": temperature}

    def get_outside_temperature_from_weather_com(self) -> dict:
        return {"error": 404}

    def setHeadlights(self, mode: str) -> dict:
        if mode not in ("on", "off", "auto"):
            return {"error": "Invalid headlight mode."}
        self.headLightStatus = "on" if mode == "on" else "off"
        return {"headlightStatus": self.headLightStatus}

    def displayCarStatus(self, option: str) -> dict:
        status: dict[str, Any] = {}
        if self.long_context:
            status["metadata"] = filler("CAR_STATUS_METADATA_EXTENSION")
        if option == "fuel":
            status["fuelLevel"] = self.fuelLevel
        elif option == "battery":
            status["batteryVoltage"] = self.batteryVoltage
        elif option == "doors":
            status["doorStatus"] = self.doorStatus
        elif option == "climate":
            status["currentACTemperature"] = self.acTemperature
            status["fanSpeed"] = self.fanSpeed
            status["climateMode"] = self.acMode
            status["humidityLevel"] = self.humidityLevel
        elif option == "headlights":
            status["headlightStatus"] = self.headLightStatus
        elif option == "parkingBrake":
            status["parkingBrakeStatus"] = self.parkingBrakeStatus
            status["parkingBrakeForce"] = self._parkingBrakeForce
            status["slopeAngle"] = self._slopeAngle
        elif option == "brakePedal":
            status["brakePedalStatus"] = self.brakePedalStatus
            status["brakePedalForce"] = self._brakePedalForce
        elif option == "engine":
            status["engineState"] = self.engine_state
        else:
            status["error"] = "Invalid option"
        return status

    def activateParkingBrake(self, mode: str) -> dict:
        if mode not in ("engage", "release"):
            return {"error": "Invalid mode"}
        if mode == "engage":
            self.parkingBrakeStatus = "engaged"
            self._parkingBrakeForce = 500.0
        else:
            self.parkingBrakeStatus = "released"
            self._parkingBrakeForce = 0.0
        self._slopeAngle = 10.0
        reply: dict[str, Any] = {}
        if self.long_context:
            reply["parkingBrakeInstruction"] = filler("PARKING_BRAKE_INSTRUCTION")
        reply.update(
            {
                "parkingBrakeStatus": self.parkingBrakeStatus,
                "_parkingBrakeForce": self._parkingBrakeForce,
                "_slopeAngle": self._slopeAngle,
            }
        )
        return reply

    def pressBrakePedal(self, pedalPosition: float) -> dict:
        if not (0 <= pedalPosition <= 1):
            return {"error": "Pedal position must be between 0 and 1."}
        if pedalPosition == 0:
            self.brakePedalStatus = "released"
            self._brakePedalForce = 0.0
            return {"brakePedalStatus": "released", "brakePedalForce": 0.0}
        self.brakePedalStatus = "pressed"
        self._brakePedalForce = _MAX_BRAKE_FORCE * pedalPosition
        return {"brakePedalStatus": "pressed", "brakePedalForce": float(self._brakePedalForce)}

    def releaseBrakePedal(self) -> dict:
        self.brakePedalStatus = "released"
        self._brakePedalForce = 0.0
        return {"brakePedalStatus": "released", "brakePedalForce": 0.0}

    def setCruiseControl(self, speed: float, activate: bool, distanceToNextVehicle: float) -> dict:
        distanceToNextVehicle = float(distanceToNextVehicle)
        speed = float(speed)
        if self.engine_state == "stopped":
            return {"error": "Start the engine before activating the cruise control."}
        # The distance is kept even when the speed is then refused.
        self.distanceToNextVehicle = distanceToNextVehicle
        if activate:
            if speed < 0 or speed > 120 or speed % 5 != 0:
                return {"error": "Invalid speed"}
            self.cruiseStatus = "active"
        else:
            self.cruiseStatus = "inactive"
        return {
            "cruiseStatus": self.cruiseStatus,
            "currentSpeed": speed,
            "distanceToNextVehicle": distanceToNextVehicle,
        }

    def get_current_speed(self) -> dict:
        return {"currentSpeed": self._random.uniform(0.0, 120.0)}

    def display_log(self, messages: list) -> dict:
        return {"log": messages}

    def estimate_drive_feasibility_by_mileage(self, distance: float) -> dict:
        return {"canDrive": not (self.fuelLevel * _MILES_PER_GALLON < distance)}

    def liter_to_gallon(self, liter: float) -> dict:
        return {"gallon": liter * _GALLONS_PER_LITER}

    def gallon_to_liter(self, gallon: float) -> dict:
        return {"liter": gallon * _LITERS_PER_GALLON}

    def estimate_distance(self, cityA: str, cityB: str) -> dict:
        reply: dict[str, Any] = {}
        # Compared, not hashed: the reference answers "not found" for any odd argument.
        distance = next(
            (
                km
                for a, b, km in _DISTANCES
                if (cityA == a and cityB == b) or (cityA == b and cityB == a)
            ),
            None,
        )
        if distance is None:
            reply["error"] = "distance not found in database."
        else:
            reply["distance"] = distance
        if self.long_context:
            reply["intermediaryCities"] = filler_copy("INTERMEDIARY_CITIES")
        return reply

    def get_zipcode_based_on_city(self, city: str) -> dict:
        # Compared, not hashed, like estimate_distance: any odd argument gives "00000".
        return {"zipcode": next((code for name, code in _ZIPCODES if city == name), "00000")}

    def set_navigation(self, destination: str) -> dict:
        self.destination = destination
        return {"status": "Navigating to " + destination}

    def check_tire_pressure(self) -> dict:
        pressures = {
            "frontLeftTirePressure": self.frontLeftTirePressure,
            "frontRightTirePressure": self.frontRightTirePressure,
            "rearLeftTirePressure": self.rearLeftTirePressure,
            "rearRightTirePressure": self.rearRightTirePressure,
        }
        average = (
            self.frontLeftTirePressure
            + self.frontRightTirePressure
            + self.rearLeftTirePressure
            + self.rearRightTirePressure
        ) / 4
        return {
            **pressures,
            "healthy_tire_pressure": 30 <= average <= 35,
            "car_info": filler("CAR_STATUS_METADATA_EXTENSION") if self.long_context else {},
        }

    def find_nearest_tire_shop(self) -> dict:
        return {"shopLocation": _TIRE_SHOP}
